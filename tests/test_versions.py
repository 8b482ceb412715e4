"""Comparing Python versions: tox runs the same suite under two interpreters,
and pyperf compare_to and report.py accept the pair."""

import glob
import json
import os
import shutil
import subprocess
import sys

import pyperf

from conftest import ROOT, TINY_RUNNER, run, run_bench, skip_or_fail

REPORT = str(ROOT / "report.py")
TINY_SELECTION = ["--workload", "sleep,encode", "--model",
                  "sequential,threads-2,asyncio", "--items", "12", "--no-control"]


def pyenv_bins():
    """pyenv's versions as `make versions` orders them: the newest patch
    release of a version first."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")

    def release(path):
        name = os.path.basename(os.path.dirname(path))
        return (not name.endswith("t"),
                [int(part) if part.isdigit() else -1
                 for part in name.rstrip("t").split(".")])
    return sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin")),
                  key=release, reverse=True)


def search_path():
    """PATH as `make versions` extends it: PATH first, then pyenv's versions."""
    return os.pathsep.join([os.environ.get("PATH", "")] + pyenv_bins())


def interpreters():
    """{"3.10": path, ...}: each minor version 3.10+ that runs here."""
    found = {}
    for minor in range(10, 20):
        version = "3.%d" % minor
        path = shutil.which("python" + version, path=search_path())
        candidates = [path] if path else []
        candidates += [os.path.join(d, "python" + version) for d in pyenv_bins()]
        for candidate in candidates:
            if not candidate or not os.path.exists(candidate):
                continue
            # A free-threaded build also installs python3.X: not this one.
            proc = subprocess.run(
                [candidate, "-c", "import sys, sysconfig, venv; sys.exit("
                 "bool(sysconfig.get_config_var('Py_GIL_DISABLED')))"],
                capture_output=True, timeout=60)
            if proc.returncode == 0:
                found[version] = candidate
                break
    return found


def tox(args, results, timeout=900):
    env = dict(os.environ, PATH=search_path(), CONCBENCH_RESULTS=str(results),
               CONCBENCH_PRESET="quick")
    return subprocess.run([sys.executable, "-m", "tox"] + args, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_two_versions_compare(tmp_path):
    found = interpreters()
    if len(found) < 2:
        skip_or_fail("comparing versions needs two Python interpreters; found %s"
                     % (", ".join(found) or "none"))
    versions = sorted(found, key=lambda v: tuple(map(int, v.split("."))))
    oldest, newest = versions[0], versions[-1]
    envs = ["py" + v.replace(".", "") for v in (oldest, newest)]
    # py39t stands for an interpreter this machine lacks: skipped with a
    # line, and the matrix still succeeds.
    proc = tox(["-e", ",".join(envs + ["py39t"]), "--"] + TINY_SELECTION
               + TINY_RUNNER, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert ("py39t: skipped because could not find python interpreter"
            in proc.stdout + proc.stderr)
    files = [tmp_path / ("%s.json" % env) for env in envs]
    suites = [pyperf.BenchmarkSuite.load(str(path)) for path in files]

    # Same names, same order, same metadata keys; the interpreter differs.
    names = [suite.get_benchmark_names() for suite in suites]
    assert names[0] == names[1] and len(names[0]) == 6
    # latency_every is there only where a process found its items too cheap
    # to time each (concbench.item_sampling.ItemSampler): a measurement, which a slow
    # moment on either interpreter decides, not a difference of versions.
    measured = {"latency_every"}
    for first, second in zip(*(suite.get_benchmarks() for suite in suites)):
        assert set(first.get_metadata()) - measured == set(second.get_metadata()) - measured
        run_keys = [set(r.get_metadata()) - measured for s in (first, second)
                    for r in s.get_runs() if r.values]
        assert all(keys == run_keys[0] for keys in run_keys)
    for suite, version in zip(suites, (oldest, newest)):
        meta = suite.get_benchmarks()[0].get_metadata()
        assert meta["python_version"].startswith(version + ".")
        assert meta["gil"] in ("enabled", "disabled")
        assert meta["free_threaded_build"] in ("yes", "no")

    compare = tox(["-e", "compare"], tmp_path)
    assert compare.returncode == 0, compare.stdout[-3000:] + compare.stderr[-3000:]
    out = compare.stdout
    # pyperf's table, then the report with both interpreters in its header.
    assert "| Benchmark" in out and "encode/threads-2" in out
    for env, version in zip(envs, (oldest, newest)):
        assert "%s.json: cpython %s." % (env, version) in out
    assert "%s MiB" % envs[0] in out and "memory change" in out

    # The eager task factory: run and verified where it exists (3.12+),
    # left out with its reason where it does not.
    for env, version in zip(envs, (oldest, newest)):
        python = str(ROOT / ".tox" / env / "bin" / "python")
        out = tmp_path / ("eager-%s.json" % env)
        eager = subprocess.run(
            [python, str(ROOT / "bench.py"), "--preset", "quick", "--workload",
             "sleep", "--model", "sequential,asyncio-eager,uvloop-eager", "--items",
             "12", "--no-control"] + TINY_RUNNER + ["-o", str(out)],
            cwd=tmp_path, capture_output=True, text=True, timeout=300)
        if tuple(map(int, version.split("."))) >= (3, 12):
            assert eager.returncode == 0, eager.stderr
            ran = pyperf.BenchmarkSuite.load(str(out)).get_benchmark_names()
            assert ran == ["sleep/sequential", "sleep/asyncio-eager",
                           "sleep/uvloop-eager"]
            for bench in pyperf.BenchmarkSuite.load(str(out)).get_benchmarks():
                for figures in (r.get_metadata() for r in bench.get_runs() if r.values):
                    assert figures["items"] == 12 and figures["failures"] == 0
        else:   # named outright: refused; in a preset: left out, said
            assert eager.returncode == 2 and not out.exists()
            assert eager.stderr.strip().splitlines() == [
                "bench.py: error: asyncio-eager cannot run sleep: the eager task "
                "factory needs Python 3.12 or later"]
            listed = subprocess.run(
                [python, str(ROOT / "bench.py"), "--workload", "sleep", "--list"],
                cwd=tmp_path, capture_output=True, text=True, timeout=300)
            assert ("# sleep/asyncio-eager: left out, the eager task factory needs "
                    "Python 3.12 or later") in listed.stderr

    # A second run keeps the first one's file.
    again = tox(["-e", envs[0], "--"] + TINY_SELECTION + TINY_RUNNER
                + ["--workload", "sleep"], tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "moved the earlier" in again.stdout + again.stderr
    kept = glob.glob(str(tmp_path / "earlier" / ("%s-*.json" % envs[0])))
    assert len(kept) == 1
    assert pyperf.BenchmarkSuite.load(kept[0]).get_benchmark_names() == names[0]


def free_threaded_interpreters():
    """[(tox environment, path)] of the free-threaded Pythons found here,
    the newest first."""
    found = []
    for minor in (14, 13):
        name = "python3.%dt" % minor
        path = shutil.which(name, path=search_path())
        candidates = [path] if path else []
        candidates += [os.path.join(d, name) for d in pyenv_bins()]
        for candidate in candidates:
            if candidate and os.path.exists(candidate):
                found.append(("py3%dt" % minor, candidate))
                break
    return found


def free_threaded_interpreter():
    """(tox environment, path) of a free-threaded Python found here, or None."""
    found = free_threaded_interpreters()
    return found[0] if found else None


def test_free_threaded_build_runs_without_the_gil(tmp_path):
    found = free_threaded_interpreter()
    if found is None:
        skip_or_fail("the free-threaded path needs python3.13t or python3.14t; "
                     "none found (on PATH or under pyenv)")
    env, _ = found
    # The CPU workloads' runs on this build: tests/test_transparency.py.
    proc = tox(["-e", env, "--", "--workload", "sleep,http", "--model",
                "sequential,threads-2,asyncio", "--items", "12", "--no-control"]
               + TINY_RUNNER,
               tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / ("%s.json" % env)))
    assert len(suite.get_benchmark_names()) == 6
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        assert meta["free_threaded_build"] == "yes"
        if meta["workload"] == "http":    # granian has no wheel there
            assert meta["http_server"].startswith("aiohttp ")
            assert meta["http_server_python"].endswith("t")
        for one in bench.get_runs():
            figures = one.get_metadata()
            assert figures["gil_enabled"] == "no", (bench.get_name(), figures)
            assert "gil_enabled_by" not in figures
    # The same binary with the GIL forced on.
    python = str(ROOT / ".tox" / env / "bin" / "python")
    forced = subprocess.run([python, str(ROOT / "bench.py"), "--gil", "on",
                             "--preset", "quick", "--workload", "encode", "--model",
                             "sequential,threads-2", "--items", "50", "--no-control"]
                            + TINY_RUNNER + ["-o", str(tmp_path / "on.json")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert forced.returncode == 0, forced.stderr
    on = pyperf.BenchmarkSuite.load(str(tmp_path / "on.json"))
    assert on.get_metadata()["gil_forced"] == "on"
    assert {r.get_metadata()["gil_enabled"] for b in on.get_benchmarks()
            for r in b.get_runs()} == {"yes"}


GILFUL = """
#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gilful", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_gilful(void) { return PyModule_Create(&module); }
"""


def test_a_module_that_re_enables_the_gil_is_caught(tmp_path):
    """An extension without the Py_mod_gil slot turns the GIL back on with
    only a warning: the runs must say so, bench.py must warn, and the report
    must flag the rows."""
    found = free_threaded_interpreter()
    if found is None:
        skip_or_fail("the free-threaded path needs python3.13t or python3.14t; "
                     "none found (on PATH or under pyenv)")
    env, interpreter = found
    python = ROOT / ".tox" / env / "bin" / "python"
    if not python.exists():
        proc = tox(["-e", env, "--notest"], tmp_path)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = subprocess.run([str(python), "-c", "import sysconfig; print("
                             "sysconfig.get_paths()['include']); print("
                             "sysconfig.get_config_var('EXT_SUFFIX'))"],
                            capture_output=True, text=True, check=True,
                            timeout=60).stdout.split()
    build = tmp_path / "gilful"
    build.mkdir()
    (build / "gilful.c").write_text(GILFUL)
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        skip_or_fail("building the test's C extension needs a C compiler")
    subprocess.run([compiler, "-shared", "-fPIC", "-I" + config[0], "gilful.c",
                    "-o", "gilful" + config[1]], cwd=build, check=True, timeout=120)
    # Every process of the run imports it first thing (pyperf passes
    # PYTHONPATH to its workers).
    (build / "sitecustomize.py").write_text("import gilful\n")
    env_vars = dict(os.environ, PYTHONPATH=str(build))
    proc = subprocess.run([str(python), str(ROOT / "bench.py"), "--preset", "quick",
                           "--workload", "encode", "--model", "sequential,threads-2",
                           "--items", "50", "--no-control"] + TINY_RUNNER + ["-o", "re.json"],
                          cwd=tmp_path, env=env_vars, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "the GIL was enabled in its worker" in proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "re.json"))
    assert suite.get_metadata()["gil_expected"] == "no"
    assert {r.get_metadata()["gil_enabled"] for b in suite.get_benchmarks()
            for r in b.get_runs()} == {"yes"}
    shown = run([REPORT, str(tmp_path / "re.json"), "--format", "json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    rows = [row for workload in json.loads(shown.stdout)["workloads"].values()
            for row in workload["rows"]]
    assert all("gil" in row["flags"].split(",") for row in rows)
    assert "GIL: enabled in every run (expected off: flagged gil)" in "\n".join(
        json.loads(shown.stdout)["header"])


def test_keep_earlier_moves_the_old_file_aside(tmp_path):
    args = ["--workload", "sleep", "--model", "sequential", "--items", "3",
            "--no-control"] + TINY_RUNNER
    first = run_bench(args + ["-o", "out.json"], tmp_path)
    assert first.returncode == 0, first.stderr
    original = (tmp_path / "out.json").read_bytes()
    refused = run_bench(args + ["-o", "out.json"], tmp_path)
    assert refused.returncode == 2 and "--keep-earlier" in refused.stderr
    assert (tmp_path / "out.json").read_bytes() == original
    kept = run_bench(args + ["-o", "out.json", "--keep-earlier"], tmp_path)
    assert kept.returncode == 0, kept.stderr
    moved = list((tmp_path / "earlier").glob("out-*.json"))
    assert len(moved) == 1 and moved[0].read_bytes() == original
    assert "moved the earlier out.json to earlier/out-" in kept.stderr
    # Bad input never moves anything.
    bad = run_bench(args + ["-o", "out.json", "--keep-earlier", "--items", "0"],
                    tmp_path)
    assert bad.returncode == 2
    assert len(list((tmp_path / "earlier").glob("*.json"))) == 1


def test_report_expands_patterns_and_prints_pyperf_table(tmp_path):
    data = ROOT / "tests" / "data"
    for name in ("small.json", "slow.json"):
        shutil.copy(data / name, tmp_path / ("py3-" + name))
    proc = run([REPORT, "--compare-to-table", str(tmp_path / "py3*.json")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.index("| Benchmark") < proc.stdout.index("py3-slow.json")
    assert proc.stdout.count("py3-small.json") >= 1
    missing = run([REPORT, str(tmp_path / "nothing*.json")], tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().endswith("no file matches %s"
                                           % (tmp_path / "nothing*.json"))
    single = run([REPORT, "--compare-to-table", str(data / "small.json")], tmp_path)
    assert single.returncode == 2 and "two files" in single.stderr


def test_make_names_a_python_that_does_not_run(tmp_path):
    # A pyenv shim of a version that is not selected exits 127 with a page
    # of its own: the venv's check says, in one line, what to give instead.
    for name in ("Makefile", "pyproject.toml", "constraints.txt", "setup.cfg"):
        shutil.copy(ROOT / name, tmp_path / name)
    missing = str(tmp_path / "no-such-python3.13")
    proc = subprocess.run(["make", "PYTHON=" + missing, "venv"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: %s does not run here (exit 127); give a Python 3.10 or newer "
                      "by its path: make PYTHON=/path/to/python3.X" % missing], proc.stderr
    assert not (tmp_path / ".venv").exists()

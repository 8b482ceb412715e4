"""Workloads and models from other packages: a plugin distribution built
here as a wheel, installed without the network, run by the installed
command from outside the checkout; --workload-module; and the plugins that
cannot be used."""

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyperf
import pytest

from concbench import ladder
from concbench.run.options import parser
from conftest import ROOT

COMMAND = str(Path(sys.executable).parent / "concbench")

DEMO = '''
"""A demo plugin: a CPU workload and a model family."""
import random

from concbench.models.base import Model
from concbench.workloads.base import Workload


def digit_sum(number):
    return sum(int(digit) for digit in str(number ** 7))


class DigitSums(Workload):
    name = "%(workload)s"
    kind = "cpu"

    def make_items(self):
        rnd = random.Random(7)
        return [rnd.randrange(10 ** 6) for _ in range(300)]

    def sync_function(self):
        return digit_sum


class Backwards(Model):
    """Runs the items one by one, last first, and returns them in order."""
    family = "%(family)s"
    OWNS = r"%(family)s(-.*)?"
    PATTERN = r"%(family)s"
    FORM = "%(family)s"

    @property
    def name(self):
        return "%(family)s"

    def run(self, sync_fn, async_fn, items, clock=None):
        return [sync_fn(item) for item in items[::-1]][::-1]
'''


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (name, digest.decode(), len(data))


def build_wheel(folder, distribution, version, package, files, entry_points):
    """A pure-Python wheel, made by hand: what a build backend would write."""
    info = "%s-%s.dist-info" % (distribution.replace("-", "_"), version)
    contents = dict(("%s/%s" % (package, name), text) for name, text in files.items())
    contents[info + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                    % (distribution, version))
    contents[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: tests\n"
                                 "Root-Is-Purelib: true\nTag: py3-none-any\n")
    contents[info + "/entry_points.txt"] = "".join(
        "[%s]\n%s\n" % (group, "\n".join("%s = %s" % pair for pair in points))
        for group, points in entry_points.items())
    records = [record_line(name, text.encode()) for name, text in contents.items()]
    contents[info + "/RECORD"] = "\n".join(records + [info + "/RECORD,,"]) + "\n"
    path = folder / ("%s-%s-py3-none-any.whl" % (distribution.replace("-", "_"), version))
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in contents.items():
            wheel.writestr(name, text)
    return path


def install(wheel, target):
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                           "--no-deps", "--no-index", "--disable-pip-version-check",
                           "--target", str(target), str(wheel)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def demo_plugin(tmp, distribution="concbench-demo-plugin", version="0.3.1",
                workload="digit-sums", family="backwards", package="concbench_demo",
                source=DEMO, model_value=None):
    """Build and install a plugin distribution; return its site folder."""
    site = tmp / ("site-" + package)
    wheel = build_wheel(tmp, distribution, version, package,
                        {"__init__.py": source % {"workload": workload, "family": family}},
                        {"concbench.workloads": [(workload, package + ":DigitSums")],
                         "concbench.models": [(family, model_value or package + ":Backwards")]})
    install(wheel, site)
    return site


def concbench(args, cwd, sites=(), timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(s) for s in sites))
    return subprocess.run([COMMAND] + [str(a) for a in args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_line_error(proc, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_plugin_distribution_lists_runs_and_reports(tmp_path):
    site = demo_plugin(tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    listed = concbench(["list", "--preset", "quick"], work, [site])
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    # After every built-in workload, under its kind's quick models.
    # Its worker counts sized to this machine (concbench.ladder): U and 2U.
    usable = ladder.sized_for(parser().parse_args([]))
    assert names[-7:] == ["digit-sums/sequential", "digit-sums/control",
                          "digit-sums/threads-%d" % usable,
                          "digit-sums/threads-%d" % (2 * usable),
                          "digit-sums/processes-%d-chunk-10" % usable,
                          "digit-sums/processes-%d-chunk-10" % (2 * usable),
                          "digit-sums/asyncio"]
    proc = concbench(["run", "--workload", "digit-sums", "--model",
                      "sequential,threads-2,backwards", "-p", "2", "-n", "3", "-w", "0",
                      "-o", "x.json"], work, [site])
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(work / "x.json"))
    # A user's workload gets its A/A control too.
    assert suite.get_benchmark_names() == [
        "digit-sums/sequential", "digit-sums/control", "digit-sums/threads-2",
        "digit-sums/backwards"]
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        assert meta["workload_plugin"] == "concbench-demo-plugin"
        assert meta["workload_plugin_version"] == "0.3.1"
        assert meta["items_per_batch"] == 300
        for run in bench.get_runs():
            if run.values:     # every batch checked, none failed
                assert run.get_metadata()["items"] == 300 * len(run.values)
                assert run.get_metadata()["failures"] == 0
    backwards = suite.get_benchmark("digit-sums/backwards").get_metadata()
    assert (backwards["model_plugin"], backwards["model_plugin_version"]) == \
        ("concbench-demo-plugin", "0.3.1")
    assert "model_plugin" not in suite.get_benchmark("digit-sums/threads-2").get_metadata()
    shown = concbench(["report", "x.json", "--format", "json"], work, [site])
    assert shown.returncode == 0, shown.stderr
    entry = json.loads(shown.stdout)["workloads"]["digit-sums"]
    rows = entry["rows"]
    assert [r["model"] for r in rows] == ["sequential", "threads-2", "backwards"]
    assert entry["control"]["benchmark"] == "digit-sums/control"
    assert entry["control"]["rounds"] == 2
    assert not any({"check", "failures"} & set(r["flags"].split(",")) for r in rows), rows
    # The same work, in another order: about 1x. Each round's speedup is
    # the median of its worker's three pairs of 5 ms batches; beside the
    # whole suite and one busy loop it read 0.49x once, so the bound is a
    # third: a Backwards that computes each item four times reads about
    # 0.25x, and fails.
    print("backwards: %.2fx" % rows[2]["speedup"])
    assert rows[2]["speedup"] > 1 / 3


def test_positions_do_not_depend_on_installation_order(tmp_path):
    first = demo_plugin(tmp_path, "zeta-plugin", "1.0", "zeta", "zfamily", "zeta_pkg")
    second = demo_plugin(tmp_path, "alpha-plugin", "1.0", "alpha", "afamily", "alpha_pkg")
    orders = [concbench(["list", "--preset", "quick"], tmp_path, sites).stdout.split()
              for sites in ([first, second], [second, first])]
    assert orders[0] == orders[1]
    plugins = [name for name in orders[0] if name.split("/")[0] in ("alpha", "zeta")]
    assert plugins[0].startswith("alpha/") and plugins[-1].startswith("zeta/")


def test_a_plugin_that_raises_on_import(tmp_path):
    site = demo_plugin(tmp_path, source="raise ImportError('no such driver')\n")
    error = one_line_error(concbench(["run", "--workload", "digit-sums", "-o", "x.json"],
                                     tmp_path, [site]),
                           "workload plugin digit-sums", "concbench-demo-plugin 0.3.1",
                           "no such driver")
    assert error.startswith("concbench run: error: ")
    assert not (tmp_path / "x.json").exists()
    # Not asked for: a warning line, and the rest runs.
    listed = concbench(["list", "--preset", "quick", "--workload", "sleep"], tmp_path, [site])
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == "sleep/sequential"
    assert "warning: workload plugin digit-sums" in listed.stderr
    assert "warning: model plugin backwards" in listed.stderr


def test_a_class_without_the_contract(tmp_path):
    source = DEMO.replace("    def make_items(self):", "    def items(self):")
    site = demo_plugin(tmp_path, source=source)
    one_line_error(concbench(["run", "--workload", "digit-sums", "-o", "x.json"],
                             tmp_path, [site]), "DigitSums has no make_items()")
    broken_model = demo_plugin(tmp_path, package="other_pkg", model_value="other_pkg:digit_sum")
    one_line_error(concbench(["run", "--workload", "sleep", "--model", "backwards",
                              "-o", "x.json"], tmp_path, [broken_model]),
                   "unknown model 'backwards'", "is not a subclass of concbench.models")
    assert not (tmp_path / "x.json").exists()


def test_two_plugins_claiming_one_name(tmp_path):
    first = demo_plugin(tmp_path, "one-plugin", "1.0", package="one_pkg")
    second = demo_plugin(tmp_path, "two-plugin", "2.0", family="other", package="two_pkg")
    one_line_error(concbench(["run", "-o", "x.json"], tmp_path, [first, second]),
                   "one-plugin 1.0", "two-plugin 2.0", "claim the same name, digit-sums")
    clash = demo_plugin(tmp_path, "clash-plugin", "1.0", workload="encode", package="clash")
    one_line_error(concbench(["list"], tmp_path, [clash]), "encode is a built-in name")
    assert not (tmp_path / "x.json").exists()


WORKLOAD_MODULE = '''
import json

from concbench.workloads.simple import workload


def documents(rnd, count):
    return [json.dumps({"id": i, "scores": [rnd.random() for _ in range(20)]})
            for i in range(count)]


@workload("json-decode", items=documents, count=200)
def decode(document):
    return json.loads(document)


async def pause(item):
    import asyncio
    await asyncio.sleep(0.001)
    return item * 2


workload("doubles", items=lambda rnd, count: list(range(count)), count=20, kind="io")(pause)
'''


@pytest.mark.parametrize("how", ["file", "module"])
def test_workload_module(tmp_path, how):
    (tmp_path / "mine.py").write_text(WORKLOAD_MODULE)
    spec = "mine.py" if how == "file" else "mine"
    sites = [] if how == "file" else [tmp_path]
    proc = concbench(["run", "--workload-module", spec, "--workload", "json-decode,doubles",
                      "--model", "sequential,threads-2,processes-2-chunk-10-spawn,asyncio",
                      "--no-control", "-p", "1", "-n", "1", "-w", "0", "-o", "m.json"],
                     tmp_path, sites)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "m.json"))
    assert len(suite.get_benchmarks()) == 8
    for bench in suite.get_benchmarks():
        assert bench.get_metadata()["workload_module"] == spec
        run = bench.get_runs()[-1].get_metadata()
        assert run["items"] in (200, 20) and run["failures"] == 0


EXIT_MARKS = '''
import atexit
import os

from concbench.workloads.simple import workload

MARKS = %r


def mark(what):
    open(os.path.join(MARKS, "%%s-%%d" %% (what, os.getpid())), "w").close()


class Teardown:
    """Marks the interpreter's teardown, which clears the module's globals."""

    def __init__(self):
        self.path = os.path.join(MARKS, "teardown-%%d" %% os.getpid())

    def __del__(self, open=open):
        open(self.path, "w").close()


KEPT = Teardown()
atexit.register(mark, "atexit")


@workload("echo", items=lambda rnd, count: list(range(count)), count=5)
def echo(item):
    return item
'''


def test_a_workers_exit_handlers_run_and_its_teardown_is_skipped(tmp_path):
    """A worker that wrote its run skips the interpreter's teardown
    (concbench.run.cli.skip_teardown), but only after every exit handler,
    a workload module's among them; the master ends as Python ends."""
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "mine.py").write_text(EXIT_MARKS % str(marks))
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench.py"), "--workload-module",
                             "mine.py", "--workload", "echo", "--model", "sequential,threads-2",
                             "--no-control", "-p", "1", "-n", "1", "-w", "0", "-o", "e.json"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    found = {}
    for path in marks.iterdir():
        what, _, pid = path.name.partition("-")
        found.setdefault(int(pid), set()).add(what)
    # The master's teardown runs the marker's __del__: the module can see it.
    assert found.pop(proc.pid) == {"atexit", "teardown"}
    assert len(found) == 2, found    # one worker for each of the two benchmarks
    assert all(marked == {"atexit"} for marked in found.values()), found


LOADED = '''
import atexit
import os
import sys

from concbench.workloads.simple import workload

FOLDER = %r
MASTER_ONLY = ("concbench.run.master", "concbench.run.allocation",
               "concbench.run.added_rounds", "concbench.run.calibration", "concbench.analysis")


def loaded():
    with open(os.path.join(FOLDER, str(os.getpid())), "w") as out:
        out.write(",".join(sorted(name for name in sys.modules
                                  if name.startswith(MASTER_ONLY))))


atexit.register(loaded)


@workload("echo", items=lambda rnd, count: list(range(count)), count=5)
def echo(item):
    return item
'''


def test_a_worker_imports_nothing_of_the_masters_loop(tmp_path):
    """A worker (hundreds in a run, each a new interpreter) registers the
    schedule and times one task: it does not import the master's loop, its
    allocation and the statistics it reads, which the master alone runs
    (concbench.run.tasks); every module imported costs every worker."""
    folder = tmp_path / "loaded"
    folder.mkdir()
    (tmp_path / "mine.py").write_text(LOADED % str(folder))
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench.py"), "--workload-module",
                             "mine.py", "--workload", "echo", "--model", "sequential,threads-2",
                             "-p", "1", "-n", "1", "-w", "0", "-o", "l.json"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    found = {int(path.name): path.read_text().split(",") for path in folder.iterdir()}
    master = found.pop(proc.pid)
    assert {"concbench.run.master", "concbench.run.allocation",
            "concbench.analysis.race"} <= set(master), master
    assert len(found) == 3, found    # a worker for each benchmark, the control's too
    assert all(names == [""] for names in found.values()), found


def test_bad_workload_modules(tmp_path):
    (tmp_path / "raises.py").write_text("raise RuntimeError('broken on purpose')\n")
    (tmp_path / "empty.py").write_text("import json\n")
    for spec, words in (("missing.py", ["--workload-module missing.py: no such file"]),
                        ("raises.py", ["cannot be imported", "broken on purpose"]),
                        ("empty.py", ["defines no workload"])):
        one_line_error(concbench(["run", "--workload-module", spec, "-o", "x.json"],
                                 tmp_path), *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.py", "raises.py"]


def test_readme_example_runs_as_printed(tmp_path):
    """The README's "Benchmark your own function" example: its module as
    printed, run by the command it shows."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Benchmark your own function"):]
    start = section.index("```python\n") + len("```python\n")
    (tmp_path / "my_workload.py").write_text(section[start:section.index("```\n", start)])
    listed = concbench(["list", "--workload-module", "my_workload.py", "--workload",
                        "json-decode"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[:3] == ["json-decode/sequential", "json-decode/control",
                                         "json-decode/threads-2"]
    proc = concbench(["run", "--workload-module", "my_workload.py", "--workload",
                      "json-decode", "--model", "sequential,processes-2-chunk-10",
                      "--items", "100", "-p", "1", "-n", "1", "-w", "0", "-o", "mine.json"],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "mine.json"))
    for bench in suite.get_benchmarks():
        meta = bench.get_runs()[-1].get_metadata()
        assert meta["items"] == 100 and meta["failures"] == 0

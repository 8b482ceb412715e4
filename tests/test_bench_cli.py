"""bench.py end to end: JSON that pyperf reads, stable names, bad input."""

import os
import sys

import pyperf
import pytest

from concbench import models, workloads
from conftest import TINY_RUNNER, preset_names, run, run_bench

TINY_SIZES = ["--items", "6", "--latency-ms", "2", "--jitter-ms", "1",
              "--image-size", "64", "--rotations", "2"]
SELECTION = ["--preset", "quick", "--workload", "encode,rotate,sleep",
             "--model", "sequential,threads-2,processes-2-chunk-2,asyncio,"
             "uvloop,asyncio-serial,hybrid-2"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two runs of one selection, side by side: what is checked of them is
    their files, not their timings."""
    from concurrent.futures import ThreadPoolExecutor

    tmp = tmp_path_factory.mktemp("bench")
    names = ("a.json", "b.json")
    with ThreadPoolExecutor(2) as pool:
        procs = list(pool.map(lambda name: run_bench(
            SELECTION + TINY_SIZES + TINY_RUNNER + ["-o", name], tmp), names))
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
    return tmp, [tmp / name for name in names]


def test_json_is_read_by_pyperf(two_runs):
    tmp, (a, b) = two_runs
    suite = pyperf.BenchmarkSuite.load(str(a))
    names = suite.get_benchmark_names()
    # 7 models of 3 workloads, and each workload's A/A control after its
    # reference.
    assert len(names) == 24
    assert names[:3] == ["encode/sequential", "encode/control", "encode/threads-2"]
    assert "rotate/processes-2-chunk-2" in names
    assert "sleep/uvloop" in names
    for command in (["show", a], ["stats", a], ["compare_to", a, b]):
        proc = run(["-m", "pyperf"] + command, tmp)
        assert proc.returncode == 0, proc.stderr
        assert "encode/hybrid-2" in proc.stdout


def test_same_selection_same_names_same_order(two_runs):
    tmp, (a, b) = two_runs
    names_a = pyperf.BenchmarkSuite.load(str(a)).get_benchmark_names()
    names_b = pyperf.BenchmarkSuite.load(str(b)).get_benchmark_names()
    assert names_a == names_b
    listed = run_bench(SELECTION + TINY_SIZES + ["--list"], tmp)
    assert listed.returncode == 0
    assert listed.stdout.split() == names_a


def test_metadata_describes_the_benchmark(two_runs):
    tmp, (a, _) = two_runs
    suite = pyperf.BenchmarkSuite.load(str(a))
    meta = suite.get_benchmark("rotate/processes-2-chunk-2").get_metadata()
    assert meta["workload"] == "rotate"
    assert meta["items_per_batch"] == 6
    assert meta["image_size"] == 64
    assert meta["rotations"] == 2
    assert meta["seed"] == 1
    assert meta["model"] == "processes-2-chunk-2"
    assert meta["processes"] == 2
    assert meta["chunk_size"] == 2
    assert meta["start_method"] in ("fork", "spawn")
    assert meta["pool_lifetime"] == "fresh"
    assert meta["async_form"] == "sync item called inside a coroutine"
    assert "creating the process pool" in meta["timed"]
    assert meta["gil"] in ("enabled", "disabled")
    assert meta["preset"] == "quick"
    assert meta["pillow_version"]
    uv = suite.get_benchmark("sleep/uvloop").get_metadata()
    assert uv["loop"] == "uvloop" and uv["async_form"] == "native coroutine"
    assert uv["uvloop_version"]


def test_progress_line_with_estimate(tmp_path):
    proc = run_bench(["--preset", "quick", "--workload", "sleep", "--model",
                      "sequential,asyncio", "--no-control"] + TINY_SIZES[:6]
                     + TINY_RUNNER, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "round 1/1" in proc.stderr
    finished = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert [line[:6] for line in finished] == ["[1/2] ", "[2/2] "]
    assert sorted(line[6:].split(":")[0] for line in finished) == [
        "sleep/asyncio", "sleep/sequential"]
    assert finished[-1].endswith("left")


def test_list_of_presets_and_globs(tmp_path):
    quick = run_bench(["--preset", "quick", "--list"], tmp_path)
    default = run_bench(["--list"], tmp_path)
    assert quick.returncode == default.returncode == 0
    names = quick.stdout.split()
    families = {"sequential", "control", "threads", "processes", "asyncio",
                "uvloop", "asyncio-serial", "hybrid"}
    for workload in ("encode", "rotate", "sleep"):
        seen = {name.split("/")[1] for name in names if name.startswith(workload)}
        seen = {m if m in ("asyncio", "uvloop", "asyncio-serial", "sequential",
                           "control")
                else m.split("-")[0] for m in seen}
        # Subinterpreters join where this Python runs them (3.13 and later)
        # and the workload's items may run in one (not Pillow's).
        here = {"interpreters"} if any(
            model.startswith("interpreters-")
            and not models.parse(model).supports(workloads.get(workload)())
            for model in preset_names(workloads.get(workload), "quick")) else set()
        assert seen == families | here, (workload, seen)
    assert len(default.stdout.split()) > len(names)
    # The variants are in the wide preset, at the default's sizes: every
    # default name is in it.
    wide = run_bench(["--preset", "wide", "--list"], tmp_path)
    assert set(default.stdout.split()) < set(wide.stdout.split())
    # Every rung of the ladder of 2 CPUs, and ThreadPoolExecutor()'s size.
    threads = run_bench(["--list", "--preset", "wide", "--model", "threads-*",
                         "--workload", "rotate", "--cpus", "2"], tmp_path)
    assert threads.returncode == 0
    assert threads.stdout.split() == [
        "rotate/threads-1", "rotate/threads-2", "rotate/threads-4",
        "rotate/threads-2-chunk-4", "rotate/threads-2-reuse", "rotate/threads-6-default"]
    extra = run_bench(["--list", "--model", "sequential,threads-64",
                       "--workload", "sleep"], tmp_path)
    assert extra.stdout.split() == ["sleep/sequential", "sleep/control",
                                    "sleep/threads-64"]
    alone = run_bench(["--list", "--model", "sequential,threads-64", "--no-control",
                       "--workload", "sleep"], tmp_path)
    assert alone.stdout.split() == ["sleep/sequential", "sleep/threads-64"]


BAD_INPUTS = [
    (["--workload", "nope"], "unknown workload 'nope'; workloads are: encode, rotate, sleep"),
    (["--model", "fibers"], "unknown model 'fibers'"),
    (["--model", "threads-0"], "the number of threads must be at least 1"),
    (["--model", "processes--1"], "expected processes-N-chunk-C"),
    (["--model", "processes-2-chunk-0"], "the chunk size must be at least 1"),
    (["--model", "zzz*"], "model pattern 'zzz*' matches no model"),
    (["--workload", "sleep", "--model", "asyncio", "--precision", "5"],
     "--precision: no speedup to decide in sleep: the reference sequential is not among"),
    (["--preset", "huge"], "invalid choice: 'huge'"),
    (["--items", "0"], "--items: 0 is out of range"),
    (["--items", "-5"], "--items: -5 is out of range"),
    (["--items", "many"], "--items: 'many' is not a number"),
    (["--latency-ms", "1e9", "--workload", "sleep"], "--latency-ms: 1e9 is out of range"),
    (["--workload", "encode", "--latency-ms", "5"],
     "--latency-ms does not apply to the selected workloads (encode)"),
    (["--workload", "sleep", "--latency-ms", "5", "--jitter-ms", "9"],
     "jitter (9 ms) must be between 0 and the latency (5 ms)"),
    (["--model", "threads-x"], "expected threads-N[-chunk-C][-reuse]"),
    (["--model", "threads-2-chunk-0"], "the chunk size must be at least 1"),
    (["--model", "interpreters-0"], "the number of interpreters must be at least 1"),
    (["--workload", "rotate", "--model", "interpreters-2"],
     "interpreters-2 cannot run rotate: "),
    (["--model", "asyncio-limit-0"], "the concurrency limit must be at least 1"),
    (["--model", "hybrid-0"], "the number of threads must be at least 1"),
    (["--items", "100000000000"], "--items: 100000000000 is out of range"),
    (["--latency-ms", "-1", "--workload", "sleep"], "--latency-ms: -1 is out of range"),
    (["--http-timeout", "0", "--workload", "http"], "--http-timeout: 0 is out of range"),
    (["--server-url", "not a url", "--workload", "http"],
     "'not a url' is not an http:// or https:// URL"),
    (["--server-url", "http://127.0.0.1:1", "--workload", "http"],
     "--server-url http://127.0.0.1:1 does not answer"),
    (["--db-url", "nope://x", "--workload", "db"], "is not a postgresql:// or mysql://"),
    (["--db-url", "mysql://root:s3cret@h:99999/x", "--workload", "db"],
     "'mysql://root:***@h:99999/x' has an invalid port"),
    (["--db-url", "postgresql://h/x?sslmode=maybe", "--workload", "db"],
     "sslmode must be disable or require"),
    (["--db-driver", "oracle"], "--db-driver: 'oracle' is not one of"),
    (["--workload", "sleep", "--append", "other.json"], "give -o or --append, not both"),
    (["--preset", "seeds-001", "--workload", "sleep"],
     "preset seeds-001 has no sleep workload; its workloads are: http"),
    (["--without", "gc"], "--without: 'gc': expected one or more of partner, pinning, "
     "prime, sampler, probe, collect, separated by commas"),
    (["--without", ","], "--without: ',': expected one or more of"),
    (["--precision", "0"], "--precision: 0 is out of range"),
    (["--precision", "-5"], "--precision: -5 is out of range"),
    (["--precision", "tight"], "--precision: 'tight' is not a number"),
    (["--precision", "nan"], "--precision: nan is out of range"),
    (["--max-time", "0"], "--max-time: '0' is not a positive duration"),
    (["--max-time=-3m"], "--max-time: '-3m' is not a positive duration"),
    (["--max-time", "soon"], "--max-time: 'soon' is not a duration"),
    (["--precision", "10", "--pyperf-order"],
     "--precision adds rounds to interleaved runs; it cannot be used with --pyperf-order"),
    (["--max-time", "5m", "--pyperf-order"],
     "--max-time adds rounds to interleaved runs; it cannot be used with --pyperf-order"),
]
if sys.version_info < (3, 13):
    BAD_INPUTS.append((["--workload", "encode", "--model", "interpreters-2"],
                       "interpreters-2 cannot run encode: subinterpreter pools "
                       "need Python 3.13 or later"))


@pytest.mark.parametrize("args, message", BAD_INPUTS)
def test_bad_input_one_line_exit_2(tmp_path, args, message):
    proc = run_bench(args + ["-o", "out.json"], tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bench.py: error: ")
    assert message in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("option, path, message", [
    ("-o", "missing-dir/out.json", "directory %s does not exist"),
    ("-o", "a-file/out.json", "directory %s does not exist"),
    ("--append", "not-json.json", "--append not-json.json: not a pyperf JSON file"),
    ("--append", "other-tool.json", "--append other-tool.json: not a pyperf JSON file"),
])
def test_bad_output_path_one_line_exit_2(tmp_path, option, path, message):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "not-json.json").write_text('{"benchmarks": [')
    (tmp_path / "other-tool.json").write_text('{"results": [1, 2]}')
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    proc = run_bench(["--workload", "sleep", option, path] + TINY_RUNNER, tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    if "%s" in message:
        message = message % os.path.dirname(str(tmp_path / path))
    assert message in lines[0]
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before


def test_existing_output_is_refused_and_kept(tmp_path):
    out = tmp_path / "data.json"
    out.write_text("precious")
    proc = run_bench(["--workload", "sleep", "--model", "asyncio"]
                     + TINY_SIZES[:6] + TINY_RUNNER + ["-o", out], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "bench.py: error: %s already exists; choose another -o file, use "
        "--append %s to add to it, or --keep-earlier to move it aside"
        % (out, out))
    assert out.read_text() == "precious"


@pytest.mark.quick
def test_failed_check_stops_the_benchmark_loudly(capsys):
    from concbench.run import cell, worker
    from concbench import models
    from concbench import workloads

    class LosesAnItem(models.families()[0]):
        def run(self, sync_fn, async_fn, items, clock=None):
            return super().run(sync_fn, async_fn, items)[1:]

    workload = workloads.get("sleep")(items=5, latency_ms=1.0, jitter_ms=0.0)
    bench = cell.Cell(workload, LosesAnItem())
    with pytest.raises(SystemExit) as exit_info:
        worker.time_batches(1, bench)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "ERROR: sleep/sequential: result check failed: 4 results for 5 items" in err

"""The installed command, concbench run|report|list, from outside the checkout."""

import json
import subprocess
import sys
from pathlib import Path

import pyperf

from conftest import TINY_RUNNER

COMMAND = str(Path(sys.executable).parent / "concbench")


def concbench(args, cwd, timeout=300):
    return subprocess.run([COMMAND] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def test_run_list_and_report_from_another_directory(tmp_path):
    listed = concbench(["list", "--preset", "quick", "--workload", "sleep"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == "sleep/sequential"
    # The load server, a process pool and the sampler, all found from here.
    proc = concbench(["run", "--workload", "http,encode", "--model",
                      "sequential,processes-2-chunk-1", "--items", "4"]
                     + TINY_RUNNER + ["-o", "x.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "x.json"))
    assert sorted(suite.get_benchmark_names()) == [
        "encode/control", "encode/processes-2-chunk-1", "encode/sequential",
        "http/control", "http/processes-2-chunk-1", "http/sequential"]
    shown = concbench(["report", "x.json", "--format", "json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["workloads"]["http"]["rows"]
    assert [r["failures"] for r in rows] == [0, 0]
    # python -m concbench is the same command.
    again = subprocess.run([sys.executable, "-m", "concbench", "report", "x.json"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "\nhttp (" in again.stdout and "\nsequential " in again.stdout


def test_bad_commands_one_line(tmp_path):
    for args, message in (([], "a command is needed"),
                          (["frob"], "unknown command 'frob'"),
                          (["run", "--workload", "nope"], "unknown workload"),
                          (["report", "missing.json"], "no such file")):
        proc = concbench(args, tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, proc.stderr)
        assert lines[0].startswith("concbench"), lines[0]
    assert list(tmp_path.iterdir()) == []
    assert concbench(["--help"], tmp_path).stdout.startswith("usage: concbench")

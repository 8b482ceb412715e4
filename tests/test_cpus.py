"""The CPUs a run may use (concbench.cpus) and the worker counts sized to
them (concbench.ladder): cgroup files the tests write, a real affinity set
of one CPU, a real cgroup v1 quota of one CPU, and --cpus for the machines
this one is not."""

import json
import math
import os
import subprocess
import sys

import pyperf
import pytest

from concbench import cpus, ladder, models, workloads
from concbench.analysis.rows import build_rows
from concbench.run.matrix import build_matrix
from concbench.run.options import parser
from conftest import BENCH, ROOT, preset_names, run_bench, skip_or_fail

MOUNTS_V2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
MOUNTS_V1 = ("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
             "32 31 0:29 {root} /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n")


def machine_root(tmp_path, cgroup, mountinfo, files):
    """A root folder holding the proc and cgroup files of a machine."""
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/cgroup").write_text(cgroup)
    (tmp_path / "proc/self/mountinfo").write_text(mountinfo)
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return str(tmp_path)


@pytest.mark.quick
def test_cgroup_v2_cpu_max_of_the_cgroup_and_its_parents_the_smallest_wins(tmp_path):
    root = machine_root(tmp_path, "0::/user.slice/app.service\n", MOUNTS_V2, {
        "sys/fs/cgroup/cpu.max": "max 100000\n",
        "sys/fs/cgroup/user.slice/cpu.max": "250000 100000\n",
        "sys/fs/cgroup/user.slice/app.service/cpu.max": "150000 100000\n"})
    assert cpus.cgroup_quota(root) == (1.5, "")
    (tmp_path / "sys/fs/cgroup/user.slice/cpu.max").write_text("50000 100000\n")
    assert cpus.cgroup_quota(root) == (0.5, "")
    (tmp_path / "sys/fs/cgroup/user.slice/cpu.max").write_text("max\n")
    (tmp_path / "sys/fs/cgroup/user.slice/app.service/cpu.max").write_text("max 100000\n")
    assert cpus.cgroup_quota(root) == (None, "")


@pytest.mark.quick
def test_cgroup_v1_quota_over_period_and_a_containers_own_cgroup(tmp_path):
    folder = "sys/fs/cgroup/cpu,cpuacct/docker/abc/"
    root = machine_root(tmp_path, "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
                        MOUNTS_V1.format(root="/"), {
                            folder + "cpu.cfs_quota_us": "200000\n",
                            folder + "cpu.cfs_period_us": "100000\n",
                            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
                            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    assert cpus.cgroup_quota(root) == (2.0, "")
    # Inside the container's namespace its cgroup reads as the mount's root.
    inside = tmp_path / "inside"
    root = machine_root(inside, "4:cpu,cpuacct:/\n", MOUNTS_V1.format(root="/docker/abc"), {
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "50000\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    assert cpus.cgroup_quota(root) == (0.5, "")


@pytest.mark.quick
def test_a_quota_caps_the_affinity_rounded_up_and_says_why():
    machine = cpus.Cpus(logical=32, affinity=32, quota=2.5, physical=16)
    assert machine.usable == 3 and machine.limited_by() == ["quota"]
    assert machine.describe() == ("32 logical CPUs (16 physical cores), 3 usable "
                                  "(quota 2.5 CPUs)")
    both = cpus.Cpus(logical=8, affinity=4, quota=0.2)
    assert both.usable == 1 and both.limited_by() == ["affinity", "quota"]
    assert cpus.Cpus(logical=2, affinity=2).describe() == "2 logical CPUs, 2 usable"
    assert cpus.decode(cpus.encode(both)) == both


@pytest.mark.quick
@pytest.mark.parametrize("text", ["abc def\n", "", "0 100000\n", "-5 100000\n",
                                  "100000 0\n", "inf 100000\n"])
def test_a_malformed_cgroup_file_falls_back_to_the_affinity_set_with_the_reason(
        tmp_path, text):
    root = machine_root(tmp_path, "0::/a\n", MOUNTS_V2, {"sys/fs/cgroup/a/cpu.max": text})
    machine = cpus.detect(root)
    assert machine.quota is None
    assert machine.usable == len(os.sched_getaffinity(0))
    assert machine.note.startswith("cgroup quota not read (")


@pytest.mark.quick
def test_an_unreadable_cgroup_file_falls_back_too(tmp_path):
    root = machine_root(tmp_path, "0::/a\n", MOUNTS_V2, {})
    (tmp_path / "sys/fs/cgroup/a/cpu.max").mkdir(parents=True)    # not a file
    machine = cpus.detect(root)
    assert machine.quota is None and "IsADirectoryError" in machine.note


def one_cpu():
    """Run a child on one CPU of this process's set."""
    first = min(os.sched_getaffinity(0))
    return lambda: os.sched_setaffinity(0, {first})


def test_on_one_cpu_of_the_affinity_set_a_run_records_one_and_its_ideal_follows(tmp_path):
    """taskset -c 0: threads-2 can use one CPU, and its ideal is the work
    over one CPU (the header says why)."""
    out = tmp_path / "one.json"
    proc = subprocess.run(
        [sys.executable, BENCH, "--workload", "rotate", "--model", "sequential,threads-2",
         "--items", "4", "--image-size", "64", "--no-control", "-p", "2", "-n", "2",
         "-w", "0", "--max-time", "1", "-o", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=one_cpu())
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(out))
    meta = suite.get_metadata()
    assert meta["cpus_usable"] == 1 and meta["cpus_affinity"] == 1
    assert meta["cpus_sized_for"] == 1
    if os.cpu_count() > 1:
        assert meta["cpus_limited_by"] == "affinity"
    rows = {row.model: row for row in build_rows(suite)["rotate"]}
    threads = rows["threads-1"] if "threads-1" in rows else rows["threads-2"]
    least = min((r for r in rows.values() if r.cpu_per_item), key=lambda r: r.cpu_per_item)
    assert threads.ideal == pytest.approx(threads.items * least.cpu_per_item)
    report = subprocess.run([sys.executable, str(ROOT / "report.py"), str(out)],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    usable = "1 usable (affinity)" if os.cpu_count() > 1 else "1 usable"
    assert usable in report.stdout


CGROUP_V1 = "/sys/fs/cgroup/cpu"


@pytest.mark.quick
def test_under_a_cgroup_v1_quota_of_one_cpu_the_usable_count_is_one(tmp_path):
    """cpu.cfs_quota_us = cpu.cfs_period_us: one CPU's time, as a
    container's --cpus=1 gives."""
    if not os.path.isfile(os.path.join(CGROUP_V1, "cpu.cfs_quota_us")) or os.geteuid():
        skip_or_fail("a cgroup v1 quota needs root and %s (cgroup v1's cpu "
                     "controller) mounted" % CGROUP_V1)
    folder = os.path.join(CGROUP_V1, "concbench-test-%d" % os.getpid())
    os.mkdir(folder)
    try:
        with open(os.path.join(folder, "cpu.cfs_period_us"), "w") as f:
            f.write("100000")
        with open(os.path.join(folder, "cpu.cfs_quota_us"), "w") as f:
            f.write("100000")

        def enter():
            with open(os.path.join(folder, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        proc = subprocess.run(
            [sys.executable, "-c", "import json; from concbench import cpus; "
             "m = cpus.detect(); print(json.dumps([m.usable, m.quota, m.limited_by()]))"],
            capture_output=True, text=True, timeout=60, preexec_fn=enter)
        assert proc.returncode == 0, proc.stderr
        usable, quota, why = json.loads(proc.stdout)
        assert (usable, quota) == (1, 1.0)
        assert why == (["quota"] if len(os.sched_getaffinity(0)) > 1 else [])
    finally:
        os.rmdir(folder)


# -- the ladders -----------------------------------------------------------------

@pytest.mark.quick
@pytest.mark.parametrize("usable, ladder_, kept", [
    (1, [1, 2], [1, 2]), (2, [1, 2, 4], [2, 4]), (3, [1, 2, 3, 6], [3, 6]),
    (8, [1, 2, 4, 8, 16], [8, 16]), (16, [1, 2, 4, 8, 16, 32], [16, 32]),
    (64, [1, 2, 4, 8, 16, 32, 64, 128], [64, 128])])
def test_the_ladder_of_a_machine(usable, ladder_, kept):
    assert ladder.rungs(usable) == ladder_
    assert ladder.kept(usable, ladder.DEFAULT) == kept


def pools(names):
    """{name: (workers, chunk)} of the process and interpreter pools named."""
    found = {}
    for name in names:
        model = models.parse(name)
        if model.family in ("processes", "interpreters") and model.chunk:
            found[name] = (model.parallelism, model.chunk)
    return found


@pytest.mark.quick
@pytest.mark.parametrize("cpus_", [1, 2, 8, 16, 64])
@pytest.mark.parametrize("preset", ["quick", "default", "wide", "full"])
def test_every_cpu_pool_gets_as_many_chunks_as_workers_and_its_ladder(cpus_, preset):
    for name in ("encode", "rotate"):
        cls = workloads.get(name)
        names = preset_names(cls, preset, cpus_)
        items = cls.PRESETS[preset]["params"]["items"]
        for pool, (workers, chunk) in pools(names).items():
            assert math.ceil(items / chunk) >= min(workers, items), (pool, items)
        counts = {models.parse(n).parallelism for n in names
                  if n.startswith("processes-") and not n.endswith("-default")}
        rungs = ladder.rungs(cpus_) if preset in ("wide", "full") \
            else ladder.kept(cpus_, preset)
        assert set(rungs) <= counts, (name, preset, rungs, counts)
        assert max(counts) == 2 * cpus_


def test_cpus_16_lists_process_pools_up_to_16_and_beyond(tmp_path):
    listed = run_bench(["--list", "--cpus", "16", "--workload", "encode,rotate"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    for name in ("encode/processes-16-chunk-125", "encode/processes-32-chunk-125",
                 "rotate/processes-16-chunk-4", "rotate/processes-32-chunk-2",
                 "encode/processes-16-chunk-1-default", "encode/threads-16",
                 "encode/threads-32"):
        assert name in names, (name, names)
    assert "# worker counts for 16 usable CPUs (--cpus 16)" in listed.stderr
    if len(os.sched_getaffinity(0)) < 16:
        lines = [line for line in listed.stderr.splitlines()
                 if "this machine's usable CPUs: " in line]
        assert len(lines) == 1, listed.stderr


@pytest.mark.parametrize("value, message", [
    ("0", "0 is out of range"), ("-1", "-1 is out of range"),
    ("two", "'two' is not a whole number of CPUs")])
def test_bad_cpus_is_one_line_and_exit_2(tmp_path, value, message):
    proc = run_bench(["--list", "--cpus", value], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr


@pytest.mark.quick
@pytest.mark.parametrize("version, cpu_count, affinity, threads, processes", [
    ((3, 12), 8, 2, "threads-12-default", "processes-8-chunk-1-default"),
    ((3, 13), 8, 2, "threads-6-default", "processes-2-chunk-1-default"),
    ((3, 13), 64, 64, "threads-32-default", "processes-64-chunk-1-default")])
def test_the_standard_librarys_defaults_as_each_python_computes_them(
        version, cpu_count, affinity, threads, processes, monkeypatch):
    """os.cpu_count() up to 3.12, os.process_cpu_count() (affinity) from
    3.13; neither reads the quota; --cpus replaces both."""
    machine = cpus.Cpus(cpu_count, affinity, quota=1.0)
    count = ladder.stdlib_cpus(machine, version)
    assert ladder.THREAD_POOL_DEFAULT.names(count) == [threads]
    assert ladder.default_start_method((3, 14), "linux") == "forkserver"
    assert ladder.default_start_method((3, 13), "linux") == "fork"
    assert ladder.default_start_method((3, 13), "darwin") == "spawn"
    monkeypatch.setattr(ladder, "default_start_method", lambda *given: "fork")
    assert ladder.PROCESS_POOL_DEFAULT.names(count) == [processes]
    args = parser().parse_args(["--cpus", "16"])
    assert "encode/threads-20-default" in [
        b.name for b in build_matrix(parser().parse_args(
            ["--cpus", "16", "--preset", "wide", "--workload", "encode"]))]
    assert ladder.sized_for(args) == 16


HEAVY = '''
import time

from concbench.workloads.simple import workload


def heavy_items(rnd, count):
    return list(range(count))


@workload("heavy", items=heavy_items, count=8)
def heavy(item):
    deadline = time.process_time() + 0.12
    while time.process_time() < deadline:
        pass
    return item
'''


def test_a_workload_of_eight_heavy_items_gets_no_pool_of_fewer_chunks_than_workers(tmp_path):
    (tmp_path / "heavy.py").write_text(HEAVY)
    for count in (1, 2, 16, 64):
        listed = run_bench(["--list", "--workload-module", "heavy.py", "--cpus", str(count)],
                           tmp_path)
        assert listed.returncode == 0, listed.stderr
        names = [n.split("/", 1)[1] for n in listed.stdout.split() if n.startswith("heavy/")]
        found = pools(names)
        assert found, names
        for pool, (workers, chunk) in found.items():
            assert math.ceil(8 / chunk) >= min(workers, 8), (count, pool)

"""Where report.py writes (concbench.report.files): only inside the folder
it was given, only files of its own, never over an input, a link, a device,
a FIFO or a folder, and nothing left behind."""

import json
import os
import stat
import subprocess
import sys

import pytest

from concbench.report.files import safe_name
from conftest import KEEP, ROOT, replace_values

SMALL = ROOT / "tests" / "data" / "small.json"


def report(args, cwd, umask=None):
    return subprocess.run([sys.executable, str(ROOT / "report.py")] + [str(a) for a in args],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def renamed(tmp_path, names, name="evil.json"):
    """small.json with its workloads renamed ({old: new}), everywhere a
    workload's name is written."""
    data = json.loads(SMALL.read_text())

    def choose(key, value):
        if key == "workload" and value in names:
            return names[value]
        if key == "name" and isinstance(value, str) and value.partition("/")[0] in names:
            workload, _, model = value.partition("/")
            return names[workload] + "/" + model
        return KEEP
    replace_values(data, choose)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def every_file(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.quick
def test_names_from_data_are_safe_and_never_meet():
    assert safe_name("rotate") == "rotate"
    for hostile in ("/tmp/x/owned", "../../victim/rotate-owned", "..", ".hidden", "", "a b",
                    "x" * 300, "é"):
        found = safe_name(hostile)
        assert "/" not in found and not found.startswith(".") and found
        assert len(found) <= 100
    assert safe_name("a/b") != safe_name("a_b") == "a_b"
    assert safe_name("x-scaling", ("-scaling",)) != "x-scaling"


def test_a_workload_named_as_a_path_writes_nothing_outside_the_plot_folder(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "rotate-owned.png").write_bytes(b"keep")
    outside = tmp_path / "x"
    evil = renamed(tmp_path, {"rotate": str(outside / "owned"),
                              "sleep": "../../victim/rotate-owned"})
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    proc = report([evil, "--plot", "out/plots"], work)
    assert proc.returncode == 0, proc.stderr
    assert not outside.exists()
    assert (victim / "rotate-owned.png").read_bytes() == b"keep"
    assert every_file(work) == ["out"] + ["out/" + f for f in ["plots"] + [
        "plots/" + name for name in every_file(work / "out" / "plots")]]
    assert len(every_file(work / "out" / "plots")) >= 4


def test_two_workloads_whose_safe_names_would_meet_get_two_files(tmp_path):
    evil = renamed(tmp_path, {"rotate": "a/b", "sleep": "a_b"})
    proc = report([evil, "--plot", tmp_path / "plots"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    charts = [name for name in every_file(tmp_path / "plots") if not name.endswith(
        ("-scaling.png", "-latency.png"))]
    assert "a_b.png" in charts and len([c for c in charts if c.startswith("a_b")]) == 2


@pytest.mark.quick
@pytest.mark.parametrize("kind", ["input", "fifo", "link", "folder"])
def test_html_refuses_a_target_that_is_not_a_page_of_its_own(tmp_path, kind):
    data = tmp_path / "in.json"
    data.write_bytes(SMALL.read_bytes())
    kept = tmp_path / "kept.txt"
    kept.write_text("keep")
    target = {"input": data, "fifo": tmp_path / "fifo", "link": tmp_path / "link",
              "folder": tmp_path / "folder"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link":
        target.symlink_to(kept)
    elif kind == "folder":
        target.mkdir()
    before = os.lstat(target)
    proc = report([data, "--html", target], tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    after = os.lstat(target)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
    assert data.read_bytes() == SMALL.read_bytes() and kept.read_text() == "keep"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report-")]


@pytest.mark.quick
def test_a_folder_path_with_a_trailing_slash_leaves_nothing_behind(tmp_path):
    proc = report([SMALL, "--html", "missing/"], tmp_path)
    assert proc.returncode == 2 and "names a directory" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_plot_refuses_an_input_file_and_a_link_inside_its_folder(tmp_path):
    data = tmp_path / "in.json"
    data.write_bytes(SMALL.read_bytes())
    proc = report([data, "--plot", data], tmp_path)
    assert proc.returncode == 2 and "input files" in proc.stderr
    assert data.read_bytes() == SMALL.read_bytes()
    plots = tmp_path / "plots"
    plots.mkdir()
    kept = tmp_path / "kept.txt"
    kept.write_text("keep")
    (plots / "rotate.png").symlink_to(kept)
    proc = report([data, "--plot", plots], tmp_path)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr
    assert kept.read_text() == "keep" and (plots / "rotate.png").is_symlink()


def test_a_page_to_standard_output_and_with_the_umasks_mode(tmp_path):
    proc = report([SMALL, "--html", "-", "--format", "csv"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "<!DOCTYPE html>" in proc.stdout or "<html" in proc.stdout
    assert list(tmp_path.iterdir()) == []
    # Not the 0o644 of before: what the umask gives (0o666 & ~0o027).
    proc = report([SMALL, "--html", "p.html", "--format", "csv"], tmp_path, umask=0o027)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "p.html").st_mode) == 0o640


def test_names_reach_the_charts_as_literal_text(tmp_path):
    """A model named like a formula, and a parameter of dollars, draw as
    they are: no mathtext error, the page and the PNGs written."""
    data = json.loads(SMALL.read_text())

    replace_values(data, lambda key, value: "threads-2 $\\notacommand{x}$" if (
        key == "model" and value == "threads-2") else "$5 and $6" if key == "workload_params"
        else KEEP)
    path = tmp_path / "math.json"
    path.write_text(json.dumps(data))
    proc = report([path, "--html", "p.html", "--plot", "plots"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "$\\notacommand{x}$" in (tmp_path / "p.html").read_text()
    assert list((tmp_path / "plots").glob("*.png"))


@pytest.mark.quick
@pytest.mark.parametrize("flag", ["--track-memory", "--tracemalloc"])
def test_a_pyperf_memory_file_reads_in_its_own_unit(tmp_path, flag):
    """pyperf's memory files hold bytes (their ``unit``): the table shows
    them as `pyperf show` does, not as seconds."""
    out = tmp_path / "m.json"
    made = subprocess.run([sys.executable, "-m", "pyperf", "timeit", flag, "-p", "2", "-n", "2",
                           "-w", "0", "-l", "1", "-q", "-o", str(out), "x = list(range(100000))"],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    shown = subprocess.run([sys.executable, "-m", "pyperf", "show", str(out)],
                           capture_output=True, text=True, timeout=60).stdout
    expected = shown.strip().splitlines()[-1].partition("Mean +- std dev: ")[2]
    proc = report([out], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert expected and expected in proc.stdout
    assert " s +- " not in proc.stdout


# Values of every type pyperf accepts in metadata, and the edges of each.
ODD_VALUES = [0, -1, 1, 2 ** 62, 1e308, -0.0, float("nan"), float("inf"), -float("inf"),
              5e-324, "", "two", "$x$", "<!--", True, False, 0.5]
READ_KEYS = ["probe_s", "interpreters", "parallelism", "concurrency", "cpu_tree",
             "cpu_count", "items_per_batch", "mem_tree_peak", "mem_tree_base", "round",
             "cpus_usable", "failures", "items", "duration", "pair_gap_s", "chunk_size"]


@pytest.mark.parametrize("key", READ_KEYS)
def test_a_key_of_any_value_pyperf_accepts_reports_without_a_traceback(tmp_path, key):
    """Each key the report reads, set to each odd value in every run: the
    report ends with 0 or 2 in every format, never a traceback, and a value
    out of range is named in one warning line."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from concbench.report.cli import main

    source = json.loads(SMALL.read_text())
    for number, value in enumerate(ODD_VALUES):
        data = json.loads(json.dumps(source))

        replace_values(data, lambda name, _, value=value: value if name == key else KEEP)
        path = tmp_path / ("%s-%d.json" % (key, number))
        path.write_text(json.dumps(data))
        for fmt in ("text", "json", "csv", "markdown"):
            err = io.StringIO()
            with redirect_stdout(io.StringIO()), redirect_stderr(err):
                status = main([str(path), "--format", fmt])
            assert status in (0, 2), (key, value, fmt, err.getvalue())
            assert "Traceback" not in err.getvalue(), (key, value, fmt)


@pytest.mark.quick
def test_the_header_reads_each_key_from_whichever_benchmark_has_it(tmp_path):
    """A file whose first benchmark records no Python version (as a
    pyperformance file's may not) still names it from the others'."""
    data = json.loads(SMALL.read_text())
    version = data["metadata"].pop("python_version")
    for bench in data["benchmarks"][1:]:
        bench["metadata"]["python_version"] = version
    path = tmp_path / "some.json"
    path.write_text(json.dumps(data))
    proc = report([path], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "(no Python version recorded)" not in proc.stdout
    assert "3.11" in proc.stdout.splitlines()[0]


@pytest.mark.quick
def test_two_files_that_share_no_benchmark_say_so(tmp_path):
    other = renamed(tmp_path, {"rotate": "r2", "sleep": "s2", "http": "h2"}, "other.json")
    proc = report([SMALL, other], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "share no benchmark" in proc.stderr
    assert "share no benchmark" not in report([SMALL, SMALL], tmp_path).stderr


def plain_pyperf_file(path, names, memory_key="mem_max_rss", scale=1.0):
    """A pyperf file of unrelated benchmarks (as pyperformance writes):
    three runs each, with pyperf's memory metadata ``memory_key``."""
    import pyperf

    benchmarks = []
    for number, name in enumerate(names):
        runs = [pyperf.Run([(number + 1) * 0.01 * scale * (1 + 0.01 * i) for i in range(3)],
                           warmups=[(1, 0.01)],
                           metadata={"name": name, "loops": 1, "date": "2026-01-01",
                                     memory_key: (20 + number) * 2 ** 20 + run},
                           collect_metadata=False)
                for run in range(3)]
        benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return path


@pytest.mark.quick
@pytest.mark.parametrize("key", ["mem_max_rss", "command_max_rss"])
def test_pyperfs_own_memory_fills_the_memory_column_and_says_which(tmp_path, key):
    path = plain_pyperf_file(tmp_path / "plain.json", ["telco", "go"], key)
    proc = report([path], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "peak MiB (RSS)" in proc.stdout
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert "20.0" in lines["telco"] and "21.0" in lines["go"]
    rows = json.loads(report([path, "--format", "json"], tmp_path).stdout)
    rows = rows["workloads"]["(other)"]["rows"]
    assert [r["mem_peak_source"] for r in rows] == ["pyperf RSS"] * 2
    assert rows[0]["mem_peak_bytes"] == 20 * 2 ** 20 + 1


@pytest.mark.quick
def test_a_column_that_mixes_memory_figures_marks_them(tmp_path):
    """A bench.py row without its tree's PSS falls back on pyperf's RSS:
    the title and the cell say so; the other rows stay the tree's PSS."""
    data = json.loads(SMALL.read_text())
    for bench in data["benchmarks"]:
        if bench["metadata"].get("model") == "threads-2" and \
                bench["metadata"].get("workload") == "rotate":
            for run in bench["runs"]:
                run.get("metadata", {}).pop("mem_tree_peak", None)
                run.setdefault("metadata", {})["mem_max_rss"] = 50 * 2 ** 20
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(data))
    proc = report([path, "--workload", "rotate"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "peak MiB (PSS or RSS)" in proc.stdout
    threads = next(line for line in proc.stdout.splitlines() if line.startswith("threads-2 "))
    assert "50.0 RSS" in threads
    sequential = next(line for line in proc.stdout.splitlines() if line.startswith("sequential"))
    assert "RSS" not in sequential
    # Against a file whose row has the tree's PSS: not comparable.
    compared = report([SMALL, path, "--workload", "rotate", "--format", "json"], tmp_path)
    assert compared.returncode == 0, compared.stderr
    entry = next(r["files"][1] for r in json.loads(compared.stdout)["benchmarks"]
                 if r["benchmark"] == "rotate/threads-2")
    assert entry["mem_not_comparable"] == "pyperf RSS against tree PSS"
    assert "mem_change_pct" not in entry


@pytest.mark.quick
def test_unrelated_benchmarks_are_compared_but_none_is_best(tmp_path):
    """Two pyperformance-like files: each benchmark's change, as pyperf
    compare_to gives it, and no "best" across benchmarks that share nothing."""
    names = ["2to3", "chaos", "unpack_sequence"]
    base = plain_pyperf_file(tmp_path / "base.json", names)
    new = plain_pyperf_file(tmp_path / "new.json", names, scale=1.5)
    proc = report([base, new], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "best:" not in proc.stdout
    assert "control:" not in proc.stdout
    assert "no takeaway in both" in flat_text(proc.stdout)
    document = json.loads(report([base, new, "--format", "json"], tmp_path).stdout)
    assert document["best"] == {}
    changes = [record["files"][1] for record in document["benchmarks"]]
    assert [round(c["time_ratio"], 2) for c in changes] == [1.5] * 3
    assert all(c["time_significant"] for c in changes)
    # bench.py's own files still name theirs.
    assert "best:" in report([SMALL, SMALL], tmp_path).stdout


def flat_text(text):
    return " ".join(text.split())


@pytest.mark.quick
def test_bad_input_is_the_only_line_even_after_a_value_shown_as_missing(tmp_path):
    """A file with a value out of range (a warning) and an error after it:
    the error is the one line on stderr; a name with a line break in it
    stays on that line."""
    data = json.loads(SMALL.read_text())
    replace_values(data, lambda key, value: 1e300 if key == "round" else KEEP)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    proc = report([odd, "--fail-on", "slower"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "exactly two files" in proc.stderr, proc.stderr
    broken = tmp_path / "a\nb.json"
    proc = report([broken], tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "a\\nb.json" in proc.stderr


@pytest.mark.quick
def test_values_of_other_units_are_not_compared_as_times(tmp_path):
    """pyperf timeit with and without --tracemalloc: bytes against seconds
    of one benchmark name are not comparable, and the columns say value."""
    times = plain_pyperf_file(tmp_path / "times.json", ["timeit"])
    data = json.loads(times.read_text())
    data["metadata"]["unit"] = "byte"
    memory = tmp_path / "memory.json"
    memory.write_text(json.dumps(data))
    document = json.loads(report([memory, times, "--format", "json"], tmp_path).stdout)
    assert document["benchmarks"][0]["files"][1]["not_comparable"] == "different units"
    text = report([memory, times], tmp_path).stdout
    assert "memory value" in text and "value change" in text and "memory time" not in text


@pytest.mark.quick
def test_a_row_run_on_a_users_cluster_has_no_cores_and_sets_no_ideal(tmp_path):
    """rotate/threads-2 made a row of a user's Dask cluster: its runs name
    two schedulers (a cluster restarted between --append-ed runs; pyperf
    then drops the key from the benchmark's metadata) and carry the
    cluster's memory, and its tree's CPU is the client's side only (a
    hundredth of the work). It shows no cores, CPU, system share or added
    memory, has no ideal, and no other row's ideal is read from it."""
    data = json.loads(SMALL.read_text())
    bench = next(b for b in data["benchmarks"] if b["metadata"].get("name") == "rotate/threads-2")
    for index, run in enumerate(bench["runs"]):
        meta = run.setdefault("metadata", {})
        if "cpu_tree" in meta:
            meta["dask_scheduler"] = "tcp://127.0.0.1:%d" % (8786 + index % 2)
            meta["dask_cluster_memory"] = 150 * 2 ** 20
            meta["cpu_tree"] /= 100.0
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(data))
    shown = report([path, "--format", "json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    rows = {row["model"]: row for row in json.loads(shown.stdout)["workloads"]["rotate"]["rows"]}
    cluster = rows["threads-2"]
    for key in ("cpu_cores", "ideal_s", "cpu_s_per_batch", "cpu_system_share",
                "mem_added_bytes"):
        assert cluster[key] is None, (key, cluster)
    assert cluster["mem_peak_source"] == "cluster RSS", cluster
    assert all(row["ideal_from"] != "threads-2" for row in rows.values()), rows
    assert rows["processes-2-chunk-2"]["ideal_s"] is not None
    text = report([path], tmp_path)
    assert text.returncode == 0 and "(threads-2's)" not in text.stdout, text.stdout


@pytest.mark.quick
def test_rows_of_two_clusters_of_other_shapes_are_not_compared(tmp_path):
    """The same row on a user's Dask cluster of 2 workers in one file and of
    4 in the other: the two files' comparison and the gate leave it out,
    naming why, and compare the rest."""
    paths = []
    for workers in (2, 4):
        data = json.loads(SMALL.read_text())
        bench = next(b for b in data["benchmarks"]
                     if b["metadata"].get("name") == "rotate/threads-2")
        bench["metadata"].update(dask_scheduler="tcp://127.0.0.1:8786",
                                 interpreters=workers, parallelism=workers)
        paths.append(tmp_path / ("w%d.json" % workers))
        paths[-1].write_text(json.dumps(data))
    shown = report(paths + ["--format", "csv"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = [line for line in shown.stdout.splitlines() if line.startswith("rotate/")]
    assert any(line.startswith("rotate/threads-2,") and "w4.json" in line and
               "different Dask clusters (workers and threads)" in line for line in lines)
    assert sum("different Dask clusters" in line for line in lines) == 1, lines
    gate = report(paths + ["--fail-on", "changed"], tmp_path)
    assert gate.returncode == 0, gate.stderr
    assert "not compared, different Dask clusters (workers and threads): rotate/threads-2" \
        in flat_text(gate.stderr), gate.stderr

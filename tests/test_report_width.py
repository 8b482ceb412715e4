"""The text report and bench.py's console fit a terminal of 120 columns;
--columns picks the text table's columns by the document's names."""

import io
import json

import pytest

from conftest import ROOT, run
from concbench.report.columns import CELLS, EVERY, NARROW, SHOWN
from concbench.formatting import WIDTH

REPORT = str(ROOT / "report.py")
FILES = ["tests/data/small.json", "tests/data/slow.json"]


def report(*args):
    return run([REPORT] + list(args), ROOT)


@pytest.mark.quick
@pytest.mark.parametrize("files", [FILES[:1], FILES[1:], FILES])
def test_every_line_of_the_text_report_fits_120_columns(files):
    proc = report(*files)
    assert proc.returncode == 0, proc.stderr
    widest = max(proc.stdout.splitlines(), key=len)
    print("widest: %d" % len(widest))
    assert len(widest) <= WIDTH, widest
    # Nothing was cut: every line of the header and of the takeaways, as
    # the JSON has it, is in the text with its line breaks undone.
    document = json.loads(report(*files, "--format", "json").stdout)
    flat = " ".join(proc.stdout.split())
    said = list(document["header"]) + [
        line for entry in document.get("workloads", {}).values() for line in entry["takeaways"]]
    assert said and all(" ".join(line.split()) in flat for line in said)


@pytest.mark.quick
def test_the_narrow_table_and_every_column(tmp_path):
    rows = json.loads(report(FILES[0], "--format", "json").stdout)["workloads"]["sleep"]["rows"]
    text = report(FILES[0]).stdout.splitlines()
    start = text.index(next(line for line in text if line.startswith("sleep (")))
    header = text[start + 2].split("  ")
    assert [h.strip() for h in header if h.strip()] == [CELLS[n].title for n in NARROW]
    # Each row by its model, its speedup as the JSON has it.
    for row, line in zip(rows, text[start + 4:start + 4 + len(rows)]):
        assert line.startswith(row["model"] + " ") and "%.2fx" % row["speedup"] in line, line
    # --columns all: the columns markdown shows; markdown keeps them all.
    every = report(FILES[0], "--columns", "all").stdout.splitlines()
    start = every.index(next(line for line in every if line.startswith("sleep (")))
    titles = [CELLS[name].title for name in EVERY]
    assert all(title in every[start + 2] for title in titles)
    markdown = report(FILES[0], "--format", "markdown").stdout
    first = next(line for line in markdown.splitlines() if line.startswith("| benchmark"))
    assert [cell.strip() for cell in first.strip("|").split("|")] == titles
    assert [CELLS[name].text for name in EVERY] == [c.text for c in SHOWN]
    # A chosen few, in the order asked.
    chosen = report(FILES[0], "--columns", "speedup,benchmark").stdout.splitlines()
    start = chosen.index(next(line for line in chosen if line.startswith("sleep (")))
    assert chosen[start + 2].split() == ["speedup", "[95%", "CI]", "benchmark"]
    assert chosen[start + 4].split()[-1] == rows[0]["benchmark"]


@pytest.mark.quick
def test_an_unknown_column_is_one_line_naming_the_known_ones(tmp_path):
    proc = report(FILES[0], "--columns", "model,bogus")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown column bogus" in lines[0], proc.stderr
    assert all(name in lines[0] for name in CELLS)
    helped = report("--help").stdout
    assert all(name in helped.replace("\n", " ").replace(" ", "") for name in CELLS)


@pytest.mark.quick
def test_the_consoles_long_lines_wrap_within_120_columns(monkeypatch):
    from concbench.run import progress

    line = ("round 4 (added): open: " + ", ".join(
        "encode fastest (threads-2-chunk-4-reuse leads)" for _ in range(12))
        + "; 17 benchmarks in this round, about 31s; 4m12s left of 10m00s")
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    progress.say(line)
    said = err.getvalue().splitlines()
    assert len(said) > 1 and max(map(len, said)) <= WIDTH, said
    # The same words, none broken; later lines indented.
    assert " ".join(said).split() == line.split()
    assert all(part.startswith("    ") for part in said[1:])


@pytest.mark.quick
def test_a_comparison_with_a_long_name_wraps_its_times_within_120_columns():
    # A default run's longest name (rotate's forkserver pool) in two files'
    # comparison: the changes at their narrowest left it 122 wide.
    from concbench.report.render_text import render_comparison
    document = json.loads(report(FILES[0], FILES[0], "--format", "json").stdout)
    found = document["benchmarks"][0]
    found["benchmark"] = "%s/processes-2-chunk-4-forkserver" % found["workload"]
    lines = render_comparison(document, False).splitlines()
    assert max(map(len, lines)) <= WIDTH, max(lines, key=len)
    # A time wraps as its mean over its spread, never inside either.
    at = next(i for i, line in enumerate(lines) if line.startswith(found["benchmark"]))
    assert lines[at + 1].lstrip().startswith("+- "), lines[at:at + 2]

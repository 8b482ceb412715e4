"""report.py --html: one self-contained page whose tables match the JSON
document, with charts, takeaways and the files it was made from; bad
targets and inputs refused without writing anything."""

import base64
import html
import json
import os
from html.parser import HTMLParser

import pyperf
import pytest

from concbench.report.columns import ON_PAGE
from conftest import ROOT, run

REPORT = str(ROOT / "report.py")
SMALL = str(ROOT / "tests" / "data" / "small.json")
SLOW = str(ROOT / "tests" / "data" / "slow.json")


class Page(HTMLParser):
    """The page's tables (rows of cells: text, data-key, data-value), its
    embedded scripts by id, and every src/href."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tables, self.scripts, self.links, self.svgs = [], {}, [], 0
        self.headers, self.takeaways = [], []
        self._cell = self._script = self._li = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if name in attrs:
                self.links.append(attrs[name])
        if tag == "table":
            self.tables.append([])
            self.headers.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = [tag, "", attrs.get("data-key"), attrs.get("data-value")]
        elif tag == "script":
            self._script = [attrs.get("id"), ""]
        elif tag == "svg":
            self.svgs += 1
        elif tag == "li":
            self._li = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data
        if self._script is not None:
            self._script[1] += data
        if self._li is not None:
            self._li += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            kind, text, key, value = self._cell
            if kind == "th":
                self.headers[-1].append(text.strip())
            else:
                self.tables[-1][-1].append((text, key, value))
            self._cell = None
        elif tag == "script" and self._script is not None:
            self.scripts[self._script[0]] = self._script[1]
            self._script = None
        elif tag == "li" and self._li is not None:
            self.takeaways.append(self._li)
            self._li = None


def report(*args, cwd=ROOT):
    return run([REPORT] + [str(a) for a in args], cwd)


def page_and_document(tmp_path, *files):
    page = tmp_path / "page.html"
    proc = report(*files, "--html", page)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().startswith("wrote %s" % page)
    document = json.loads(report(*files, "--format", "json").stdout)
    return Page(page.read_text(encoding="utf-8")), document, page


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    """SMALL's page, drawn once for the tests that only read it."""
    return page_and_document(tmp_path_factory.mktemp("small"), SMALL)


def test_every_table_number_matches_the_json_document(small_page):
    page, document, path = small_page
    rows = [row for entry in document["workloads"].values() for row in entry["rows"]]
    body = [cells for table in page.tables for cells in table if cells]
    assert len(body) == len(rows) == 21
    by_name = {row["benchmark"]: row for row in rows}
    for cells in body:
        row = by_name[cells[0][0]]
        assert [key for _, key, _ in cells] == [c.key for c in ON_PAGE]
        for text, key, value in cells:
            assert json.loads(value) == row[key], (row["benchmark"], key)
            # The text is checked against pyperf's figures in the next test.
            assert (text.strip() != "") == (row[key] not in (None, "", [])) or \
                key == "speedup_rounds_faster", (row["benchmark"], key, text)
    assert page.headers[0] == [c.title for c in ON_PAGE]
    # Takeaways and charts: each workload's, drawn.
    said = [t for entry in document["workloads"].values() for t in entry["takeaways"]]
    assert said and set(said) <= set(page.takeaways)
    assert page.svgs >= 2 * len(document["workloads"])
    text = path.read_text()
    assert "speedup against sequential (95% interval, log)" in text
    assert ">1x<" in text or ">1x</text>" in text


@pytest.mark.quick
def test_the_page_shows_what_pyperf_reads_of_the_file(small_page):
    """The page's numbers against ones computed here from the file with
    pyperf's own API, not by the renderer's code: each benchmark's mean and
    items per second; its speedup, the geometric mean over its rounds of the
    median log ratio of the pairs its worker ran (the reference's batch
    beside each of its own), and in how many rounds it was faster; its
    failures. The visible text says the same."""
    import math
    import statistics

    page, _, _ = small_page
    suite = pyperf.BenchmarkSuite.load(SMALL)

    def medians(bench):
        return {run.get_metadata()["round"]: statistics.median(run.values)
                for run in bench.get_runs() if run.values}

    def round_logs(bench, reference):
        """{round: log(reference / own)}: CPU rows pair in their worker,
        IO rows with the reference's run of the same round."""
        if bench.get_metadata()["pairing"] == "round":
            own, theirs = medians(bench), medians(reference)
            return {r: math.log(theirs[r] / own[r]) for r in own if r in theirs}
        logs = {}
        for each in bench.get_runs():
            if not each.values:
                continue
            meta = each.get_metadata()
            partner = [float(x) for x in meta["paired_reference_s"].split()]
            assert len(partner) == len(each.values)
            logs[meta["round"]] = statistics.median(
                math.log(a / b) for a, b in zip(partner, each.values))
        return logs
    cells = {row[0][0]: {key: (text, json.loads(value)) for text, key, value in row}
             for table in page.tables for row in table if row}
    results = [bench for bench in suite.get_benchmarks()
               if "control_of" not in bench.get_metadata()]
    assert len(results) == 21 and len(suite) == 24
    assert set(cells) >= {bench.get_name() for bench in results}
    for bench in results:
        name, meta = bench.get_name(), bench.get_metadata()
        row = cells[name]
        assert row["mean_s"][1] == pytest.approx(bench.mean(), rel=1e-9), name
        # The visible text: three significant digits of pyperf's mean and
        # standard deviation, and the items per second rounded.
        assert seconds_of(row["mean_s"][0]) == pytest.approx(bench.mean(), rel=0.01), name
        assert seconds_of(row["mean_s"][0].split("+-")[1].strip()) == pytest.approx(
            bench.stdev(), rel=0.01), name
        assert float(row["items_per_s"][0]) == pytest.approx(
            meta["items_per_batch"] / bench.mean(), abs=0.51), name
        assert row["failures"][1] == sum(run.get_metadata().get("failures", 0)
                                         for run in bench.get_runs()), name
        assert row["items_per_s"][1] == pytest.approx(
            meta["items_per_batch"] / bench.mean(), rel=1e-9), name
        if meta["model"] == meta["reference_model"]:
            assert row["speedup"][1] == 1.0 and row["speedup_rounds_faster"][0] == ""
            continue
        reference = suite.get_benchmark("%s/%s" % (meta["workload"],
                                                   meta["reference_model"]))
        logs = round_logs(bench, reference)
        assert len(logs) == 3, name
        speedup = math.exp(statistics.fmean(logs.values()))
        assert row["speedup"][1] == pytest.approx(speedup, rel=1e-9), name
        faster = sum(1 for log in logs.values() if log > 0)
        assert row["speedup_rounds_faster"][0] == "%d/%d" % (faster, len(logs)), name
        assert row["speedup"][0].startswith("%.2fx" % speedup), (name, row["speedup"])


@pytest.mark.quick
def test_the_page_stands_alone_and_carries_its_files(tmp_path, small_page):
    page, document, path = small_page
    # No server, no network: nothing fetched from anywhere.
    assert all(link in ("#",) for link in page.links), page.links
    assert "<link" not in path.read_text() and "src=" not in path.read_text()
    # The pyperf file, embedded for download in base64, is the same bytes.
    embedded = tmp_path / "embedded.json"
    embedded.write_bytes(base64.b64decode(page.scripts["raw-0"]))
    assert embedded.read_bytes() == open(SMALL, "rb").read()
    original = pyperf.BenchmarkSuite.load(SMALL)
    copy = pyperf.BenchmarkSuite.load(str(embedded))
    assert copy.get_benchmark_names() == original.get_benchmark_names()
    assert [b.get_values() for b in copy.get_benchmarks()] == \
        [b.get_values() for b in original.get_benchmarks()]
    for line in document["header"]:
        assert html.escape(line.strip().partition(": ")[2]) in path.read_text()


def seconds_of(text):
    """The seconds a time written as "1.2 ms" or "1.2 ms +- 194 us" says."""
    number, unit = text.split()[:2]
    return float(number) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


def test_a_comparison_page(tmp_path):
    """Each file's time on the page, both its hidden value and its text,
    against pyperf's own mean and standard deviation of that file's
    benchmark; a benchmark missing from a file has empty cells there."""
    page, document, _ = page_and_document(tmp_path, SMALL, SLOW)
    suites = [pyperf.BenchmarkSuite.load(path) for path in (SMALL, SLOW)]
    records = {r["benchmark"]: r for r in document["benchmarks"]}
    body = [cells for table in page.tables for cells in table if cells]
    assert len(body) == len(records)
    seen = 0
    for cells in body:
        name = cells[0][0]
        by_key = {key: (text, value) for text, key, value in cells[1:] if key}
        for index, suite in enumerate(suites):
            if name not in suite.get_benchmark_names():
                assert "%d:mean_s" % index not in by_key, name
                continue
            bench = suite.get_benchmark(name)
            text, value = by_key["%d:mean_s" % index]
            assert json.loads(value) == pytest.approx(bench.mean(), rel=1e-9), name
            # Three significant digits: within half a unit of the last.
            assert seconds_of(text) == pytest.approx(bench.mean(), rel=0.01), (name, text)
            stdev = text.split("+-")[1].strip()
            assert seconds_of(stdev) == pytest.approx(bench.stdev(), rel=0.01), (name, text)
            seen += 1
    assert seen == sum(len(suite) - sum(1 for bench in suite.get_benchmarks()
                                        if "control_of" in bench.get_metadata())
                       for suite in suites)
    assert page.svgs >= 3
    assert any(t.startswith("best: ") for t in page.takeaways)


@pytest.mark.quick
def test_without_matplotlib_the_page_has_no_charts_and_says_why(tmp_path):
    page_path = tmp_path / "page.html"
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from concbench import report; sys.exit(report.main([%r, '--html', %r]))"
            % (SMALL, str(page_path)))
    proc = run(["-c", code], ROOT)
    assert proc.returncode == 0, proc.stderr
    page = Page(page_path.read_text())
    assert page.svgs == 0 and "they need matplotlib" in page_path.read_text()
    assert len([c for t in page.tables for c in t if c]) == 21


def plain_pyperf_file(tmp_path):
    bench = pyperf.Benchmark([pyperf.Run([1.0, 1.1], metadata={"name": "plain"},
                                         collect_metadata=False)])
    path = tmp_path / "plain.json"
    bench.dump(str(path))
    return path


@pytest.mark.quick
@pytest.mark.parametrize("case", ["directory", "missing folder", "under a file",
                                  "not ours", "not json"])
def test_bad_html_target_or_input(tmp_path, case):
    earlier = tmp_path / "earlier.html"
    earlier.write_text("an earlier page")
    source, target, message = SMALL, earlier, None
    if case == "directory":
        target, message = tmp_path, "is a directory"
    elif case == "missing folder":
        target, message = tmp_path / "nope" / "page.html", "no such directory"
    elif case == "under a file":
        target, message = earlier / "page.html", "no such directory"
    elif case == "not ours":
        source, message = plain_pyperf_file(tmp_path), "not one written by bench.py"
    else:
        source = tmp_path / "bad.json"
        source.write_text("{")
        message = "not a JSON file"
    before = sorted(os.listdir(tmp_path))
    proc = report(source, "--html", target)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("report.py: error: "), proc.stderr
    assert message in lines[0] and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert sorted(os.listdir(tmp_path)) == before
    assert earlier.read_text() == "an earlier page"


def test_a_page_replaces_an_earlier_one_whole(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("an earlier page")
    proc = report(SLOW, "--html", target)
    assert proc.returncode == 0, proc.stderr
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_comparison_pngs(tmp_path):
    proc = report(SMALL, SLOW, "--plot", tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")}
    assert {"compare-sleep.png", "small/rotate.png", "small/rotate-scaling.png",
            "slow/sleep.png"} <= names


@pytest.mark.quick
def test_plot_into_a_place_that_cannot_be_a_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = report(SLOW, "--plot", blocker / "plots")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "report.py: error: --plot %s: " % (blocker / "plots"))

"""report.py on files whose metadata comes from anyone: Hypothesis draws
files from small.json with values of every type pyperf accepts (whole
numbers, floats of every edge, text, booleans) at the keys the report
reads and in its free-text fields, at the suite's, a benchmark's or a
run's level. Every output format ends with exit 0 or 2, never a
traceback. A fixed seed and a bounded number of files keep it the same
test on every run (the number tried is printed)."""

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from concbench import schema
from concbench.report.cli import main
from concbench.report.load import PYPERF_READ
from conftest import ROOT

SMALL = json.loads((ROOT / "tests" / "data" / "small.json").read_text())
# The keys the report reads (the schema's and pyperf's), and the free-text
# fields a page and a chart show.
KEYS = sorted(set(schema.BY_NAME) | set(PYPERF_READ) | {
    "name", "workload", "model", "workload_params", "hostname", "platform",
    "python_version", "cpu_model_name", "description"})
TEXT = ("", "<!--", "</script><script>window.pwned=1</script>", "$\\notacommand{x}$",
        "../../etc/passwd", "a/b", "\u2028", "\x00", "é" * 200)
VALUES = st.one_of(
    st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 5e-324, 1e308, -0.0, 2 ** 62]),
    st.booleans(),
    st.text(max_size=30),
    st.sampled_from(TEXT))
# Where a value goes: the suite's metadata, one benchmark's, or every run's
# of one benchmark (pyperf merges them as a benchmark's common metadata).
EDITS = st.lists(st.tuples(st.sampled_from(["suite", "benchmark", "runs"]),
                           st.integers(min_value=0, max_value=len(SMALL["benchmarks"]) - 1),
                           st.sampled_from(KEYS), VALUES),
                 min_size=1, max_size=4)
TRIED = {"files": 0, "outcomes": {}}


@pytest.fixture(scope="module", autouse=True)
def count_the_files():
    """How many files the module tried, printed for the record (docs/report.md
    quotes it: pytest -s tests/test_report_fuzz.py)."""
    yield
    print("\nhypothesis: %d files tried, exit statuses of the tables' %s"
          % (TRIED["files"], TRIED["outcomes"]))


def edited(edits):
    data = json.loads(json.dumps(SMALL))
    for level, index, key, value in edits:
        bench = data["benchmarks"][index]
        if level == "suite":
            data["metadata"][key] = value
        elif level == "benchmark":
            bench["metadata"][key] = value
        else:
            for run in bench["runs"]:
                run.setdefault("metadata", {})[key] = value
    return data


def outcome(path, *args):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main([str(path)] + list(args))
    return status, err.getvalue()


def drawn(tmp_path, edits):
    """The drawn file, or None where no file can hold it (a lone surrogate)."""
    path = tmp_path / "drawn.json"
    try:
        path.write_text(json.dumps(edited(edits), allow_nan=True))
    except UnicodeEncodeError:
        return None
    TRIED["files"] += 1
    return path


# The same files on every run: a fixed seed, nothing kept between runs.
FIXED = dict(deadline=None, derandomize=True, database=None,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@seed(99)
@settings(max_examples=100, **FIXED)
@given(edits=EDITS)
def test_any_metadata_pyperf_accepts_reports_without_a_traceback(tmp_path, edits):
    path = drawn(tmp_path, edits)
    if path is None:
        return
    for fmt in ("text", "markdown", "csv", "json"):
        # A traceback raises out of main(): the test fails with it.
        status, err = outcome(path, "--format", fmt)
        assert status in (0, 2), (edits, fmt, err)
        assert "Traceback" not in err
        if status == 2:
            assert len(err.strip().splitlines()) == 1, err
    TRIED["outcomes"][status] = TRIED["outcomes"].get(status, 0) + 1


@seed(7)
@settings(max_examples=8, **FIXED)
@given(edits=EDITS)
def test_any_metadata_makes_a_page_and_charts_or_one_line(tmp_path, edits):
    """The page and the PNG charts, fewer files: each draws with matplotlib."""
    path = drawn(tmp_path, edits)
    if path is None:
        return
    status, err = outcome(path, "--html", str(tmp_path / "page.html"),
                          "--plot", str(tmp_path / "plots"), "--workload", "rotate")
    assert status in (0, 2), (edits, err)
    assert "Traceback" not in err

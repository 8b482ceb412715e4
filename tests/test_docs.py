"""The documentation builds with every warning an error (broken links and
references included), its option reference and metadata table are the
code's own, and the README is a front page whose links all lead somewhere."""

import re
import shutil
import subprocess
import sys

import pytest

from concbench import schema
from conftest import ROOT

DOCS = ROOT / "docs"


def build(source, target):
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going",
                           "-q", "-b", "html", str(source), str(target)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    target = tmp_path_factory.mktemp("html")
    proc = build(DOCS, target)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    return target


def test_the_options_are_what_help_prints(built):
    """Every option bench.py --help and report.py --help print is on the
    options page, made from the same parsers."""
    page = (built / "options.html").read_text()
    for program in ("bench.py", "report.py"):
        proc = subprocess.run([sys.executable, str(ROOT / program), "--help"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", proc.stdout))
        assert len(flags) > (30 if program == "bench.py" else 6), flags
        for flag in flags:
            assert flag in page, (program, flag)


def test_the_metadata_table_is_the_schemas(built):
    page = (built / "metadata.html").read_text()
    for key in schema.KEYS:
        assert "<code class=\"docutils literal notranslate\"><span class=\"pre\">%s</span>" \
            % key in page, key


def test_a_broken_link_fails_the_build(tmp_path):
    copy = tmp_path / "docs"
    shutil.copytree(DOCS, copy, ignore=shutil.ignore_patterns("_build", "_generated"))
    page = copy / "report.md"
    page.write_text(page.read_text() + "\nSee [nothing](statistics.md#no-such-heading).\n")
    proc = build(copy, tmp_path / "html")
    assert proc.returncode != 0 and "no-such-heading" in proc.stderr, proc.stderr


@pytest.mark.quick
def test_the_figures_page_keeps_what_the_pages_quote_and_no_history():
    """docs/figures.md holds the figures the README and the pages quote, each
    with its command, a newer one replacing the one it supersedes: 400 lines
    at most. The experiment log is the commit log's, not a page's."""
    assert len((DOCS / "figures.md").read_text().splitlines()) <= 400
    assert not (DOCS / "history.md").exists()
    assert "history" not in (DOCS / "index.md").read_text()


@pytest.mark.quick
def test_the_readme_is_a_front_page_whose_links_resolve():
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 150, len(lines)
    # The two commands come first.
    assert lines[2:6] == ["```sh",
                          "make bench    # the main job: set up .venv, run the default "
                          "suite, print the report",
                          "make test     # the tests: set up .venv, run pytest", "```"]
    for target in re.findall(r"\]\(([^)#]+?)(?:#([^)]*))?\)", text):
        path, anchor = target
        if path.startswith(("http://", "https://")):
            continue
        assert (ROOT / path).exists(), path
        if anchor:
            headings = [slug(line.lstrip("#").strip())
                        for line in (ROOT / path).read_text().splitlines()
                        if line.startswith("#")]
            assert anchor in headings, (path, anchor)
    for anchor in re.findall(r"\]\(#([^)]*)\)", text):
        assert anchor in [slug(line.lstrip("#").strip()) for line in lines
                          if line.startswith("#")], anchor


def slug(heading):
    """A heading's anchor as GitHub and MyST make it."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@pytest.mark.quick
def test_the_critical_values_the_pages_state_are_the_codes():
    """Every "c(n) = x" a page states is concbench.analysis.anytime.critical(n) to
    the digits it gives, and every "no interval before round n" is the
    round from which the sequence is bounded: a change of the mixture
    breaks this test until the pages follow."""
    from concbench.analysis import anytime

    stated = bounded = 0
    for page in sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]:
        text = " ".join(page.read_text().split())
        for n, value in re.findall(r"\bc\((\d+)\) = (\d+(?:\.\d+)?)", text):
            digits = len(value.partition(".")[2])
            assert round(anytime.critical(int(n)), digits) == float(value), (page.name, n, value)
            stated += 1
        for n in re.findall(r"no interval before round (\d+)", text):
            assert int(n) == anytime.first_bounded(), (page.name, n)
            bounded += 1
    assert stated >= 4 and bounded >= 2, (stated, bounded)


def page_text(path):
    """A built page's text, tags dropped and entities read."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text())).split())


def test_the_levels_the_pages_state_are_the_codes(built, monkeypatch):
    """The race's levels on the statistics page come from the code at every
    build: the page says what concbench.analysis computes, and a change of
    a level in the code changes what the pages are given."""
    from research import doc_numbers as levels
    from concbench import rules

    found = levels.substitutions()
    text = page_text(built / "statistics.html")
    assert "{{" not in text
    for phrase in ("split in advance: %s over its comparisons with the leader, %s over its"
                   % (found["race_share"], found["elimination_share"]),
                   "one-sided, at %s" % found["race_one_sided"],
                   "two-sided one at %s" % found["race_two_sided"],
                   "the first at %s one-sided, the next at %s"
                   % (found["side_first"], found["side_second"])):
        assert phrase in text, phrase
    assert (found["race_share"], found["race_one_sided"], found["side_second"]) == (
        "4%", "96% / (rows - 1)", "0.5%")
    monkeypatch.setattr(rules, "ELIMINATION_ALPHA", 0.02)
    monkeypatch.setattr(rules, "SIDE_BY_SIDE_ALPHA", 0.01)
    changed = levels.substitutions()
    assert (changed["race_share"], changed["elimination_one_sided"],
            changed["through_share"], changed["side_first"]) == (
        "3%", "98% / rows", "2%", "0.5%")


def test_the_simulation_table_on_the_page_is_its_recorded_runs(built):
    """Every cell of docs/data/simulation.json, read here with json, is on
    the figures page as the table prints it, and the pages' worst error is
    the file's."""
    import json

    record = json.loads((DOCS / "data" / "simulation.json").read_text())
    text = page_text(built / "figures.html")
    assert "{{" not in text
    assert record["command"] in text
    worst = max(cell[name] for cell in record["cells"] for name in
                ("1.00x faster/slower", "1.08x same", "fastest wrong",
                 "best count wrong", "a lower end wrong"))
    assert ("Every cell is at %s%% or below" % ("%.1f" % (100 * worst)).rstrip("0")
            .rstrip(".")) in text
    rows = {}
    for cell in record["cells"]:
        rows.setdefault((cell["world"], cell["noise"]), []).append(cell)
    for (world, noise), cells in rows.items():
        cells.sort(key=lambda cell: cell["sd"])
        wrong = " / ".join("%.1f%%" % (100 * cell["fastest wrong"]) for cell in cells)
        null = " / ".join("%.1f%%" % (100 * cell["1.00x faster/slower"]) for cell in cells)
        assert re.search(r"%s, %s %s %s .* %s" % (world, noise, re.escape(null), r"[\d.%/ ]+",
                                                  re.escape(wrong)), text), (world, noise)


def table_cells(line):
    """The cells of a Markdown table row (pipes inside code spans count:
    the pages escape none)."""
    line = line.strip()
    return len(line[1 if line.startswith("|") else 0:-1 if line.endswith("|") else None]
               .split("|"))


@pytest.mark.quick
def test_every_table_on_the_pages_renders_as_a_table():
    """A table whose delimiter row has more cells than its header is not a
    table to Markdown: the page shows its rows as a paragraph of pipes (the
    side-by-side costs on the figures page did, with 9 delimiters under 7
    headers)."""
    wrong = []
    for page in sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]:
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines[1:], start=1):
            if re.match(r"^\s*\|\s*:?-{3,}", line) and lines[number - 1].lstrip().startswith("|"):
                header = table_cells(lines[number - 1])
                if table_cells(line) != header:
                    wrong.append("%s:%d" % (page.name, number + 1))
    assert not wrong, wrong


def test_every_rule_a_page_states_is_filled_in(built):
    """A page states the band and the level through substitutions from
    concbench/rules.py (research.doc_numbers): none is left unfilled, and
    the glossary gives the band as the code has it."""
    from concbench import rules

    for page in built.glob("*.html"):
        assert "{{" not in page_text(page), page.name
    glossary = page_text(built / "glossary.html")
    assert "the same within %s" % rules.BAND_TEXT in glossary

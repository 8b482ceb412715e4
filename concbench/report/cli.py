"""report.py's command line: load the files, build the document once,
render it in the chosen format, and write the page and the charts asked for."""

import argparse
import json
import os
import statistics
import sys

from . import files, plots, render_csv, render_html, render_text
from .columns import CELLS, NARROW, cells
from .compare import compare_to_table
from .document import Analysis, comparison, label, single
from concbench.analysis.controls import control_state
from .load import ReportError, expand, load, written_by_bench
from concbench.analysis.gate import FAIL_ON, GateError, gate
from concbench import rules
from concbench.rules import BAND_TEXT, LEVEL_TEXT

PROG = "report.py"
RENDERERS = {"text": render_text.render, "markdown": render_text.render_markdown,
             "csv": render_csv.render, "json": lambda doc: json.dumps(doc, indent=2)}
FORMATS = tuple(RENDERERS)
SORTS = ("name", "time", "speedup", "memory", "cpu", "efficiency", "latency")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ReportError(message)


def parse_args(argv, prog=PROG):
    return argument_parser(prog).parse_args(argv)


def argument_parser(prog=PROG):
    """report.py's parser: what --help prints, and what the documentation's
    option reference is made from."""
    parser = Parser(prog=prog, description="Tables, charts and a shareable page "
                    "from bench.py's pyperf JSON files.")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="pyperf JSON files written by bench.py")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--columns", type=column_names, metavar="NAMES",
                        help="the text and markdown tables' columns, comma-separated, "
                        "or all (default: text %s; markdown all); the names: %s"
                        % (",".join(NARROW), ", ".join(CELLS)))
    parser.add_argument("--sort", choices=SORTS, default="name",
                        help="row order within a workload (default: as run; "
                        "latency: by p99)")
    parser.add_argument("--p99-bound", type=milliseconds, metavar="MS",
                        help="rate sweeps: the p99 latency a model must keep at a "
                        "rate to sustain it (default: twice the item's own latency)")
    parser.add_argument("--workload", type=lambda s: [w for w in s.split(",") if w],
                        help="only these workloads (comma-separated)")
    parser.add_argument("--compare-to-table", action="store_true",
                        help="print `python -m pyperf compare_to --table` on the "
                        "files first")
    parser.add_argument("--plot", metavar="DIR",
                        help="write PNG charts per workload into DIR (needs matplotlib)")
    parser.add_argument("--fail-on", choices=FAIL_ON,
                        help="two files, a base and a new run: exit 1 when a row "
                        "common to both is decided slower (or changed: slower or "
                        "faster) beyond the %s band, its speedup against its own "
                        "file's reference compared, at %s over all the rows"
                        % (BAND_TEXT.replace("%", "%%"), LEVEL_TEXT.replace("%", "%%")))
    parser.add_argument("--html", metavar="FILE",
                        help="write the report as one self-contained HTML page "
                        "(-: to standard output); never over an input file, a link, "
                        "a device or a folder")
    return parser


def column_names(text):
    names = [name for name in text.split(",") if name]
    try:
        cells(names)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return names


def milliseconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of milliseconds" % text) from None
    if not value > 0:
        raise argparse.ArgumentTypeError("%s is not above 0 ms" % text)
    return value / 1000.0


def shared_benchmarks(suites):
    """The benchmark names at least two of ``suites`` have."""
    seen, shared = set(), set()
    for suite in suites:
        names = set(suite.get_benchmark_names())
        shared |= seen & names
        seen |= names
    return shared


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ReportError("%s: %s" % (path, exc.strerror or exc)) from None


def write_plots(document, directory, inputs):
    """The document's charts as PNGs in ``directory``, each a file of ours
    (``files``): [the paths written]."""
    plt = plots.pyplot()
    if plt is None:
        raise ReportError("--plot needs matplotlib: pip install -e '.[plot]' "
                          "(or pip install matplotlib)")
    written = []
    for name, chart in plots.all_charts(plt, document):
        path = os.path.join(directory, name + ".png")
        with files.open_own(path, "--plot", inputs) as handle:
            plots.png(plt, chart, handle)
        written.append(path)
    return written


def main(argv=None, prog=PROG):
    """0: a report; 1: --fail-on found a row that fails it; 2: bad input,
    in one line (warnings of values shown as missing come after every
    check has passed, so that an error is the only line)."""
    try:
        args = parse_args(argv, prog)
        args.files = expand(args.files)
        if args.html:
            files.check_html_target(args.html, args.files)
        if args.plot:
            files.check_plot_folder(args.plot, args.files)
        if args.fail_on and len(args.files) != 2:
            raise ReportError("--fail-on compares exactly two files, a base and a new "
                              "run (%d given)" % len(args.files))
        if args.compare_to_table and len(args.files) < 2:
            raise ReportError("--compare-to-table needs two files or more")
        warnings = []
        suites = [load(path, warnings) for path in args.files]
        if args.html:
            for path, suite in zip(args.files, suites):
                if not written_by_bench(suite):
                    raise ReportError("--html: %s is a pyperf file, but not one "
                                      "written by bench.py (no workload metadata)" % path)
        analyses = [Analysis(path, suite) for path, suite in zip(args.files, suites)]
        verdicts = gate_lines(analyses, args.fail_on, args.workload) if args.fail_on else None
        if len(suites) > 1 and not shared_benchmarks(suites):
            warnings.append("the files share no benchmark: each is shown, nothing is compared")
        if len(analyses) == 1:
            document = single(analyses[0], args.workload, args.sort, args.p99_bound)
        else:
            document = comparison(analyses, args.workload)
        for line in warnings:
            print("%s: warning: %s" % (prog, one_line(line)), file=sys.stderr)
        try:
            write_outputs(args, analyses, document)
        except BrokenPipeError:
            # The reader closed standard output early (a pipe to head):
            # nothing more can reach it, and Python's flush at exit must
            # not raise again. The gate's answer still stands.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if verdicts is None:
            return 0
        failed, lines = verdicts
        print("%s: %s" % (prog, lines[0]), file=sys.stderr)
        for line in lines[1:]:
            print(line, file=sys.stderr)
        return 1 if failed else 0
    except ReportError as exc:
        print("%s: error: %s" % (prog, one_line(str(exc))), file=sys.stderr)
        return 2


def one_line(text):
    """``text`` with its line breaks and other control characters escaped
    (a file's name or a name from its data may hold them)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def write_outputs(args, analyses, document):
    """The report in its format on standard output, then the page and the
    charts asked for."""
    page = (render_html.render(document, [(p, read_bytes(p)) for p in args.files])
            if args.html else None)
    if args.compare_to_table:
        print(compare_to_table(args.files))
    if args.format in ("text", "markdown"):
        print(render_text.render(document, args.format == "markdown", args.columns))
    else:
        print(RENDERERS[args.format](document))
    if page is not None:
        files.write_page(args.html, page, args.files)
        if args.html != "-":
            print("wrote %s (%d KiB)" % (args.html, len(page.encode()) // 1024),
                  file=sys.stderr)
    if args.plot:
        plot_documents = [(args.plot, document)]
        if len(analyses) > 1:
            # Each file's own charts too, in a folder of its name.
            plot_documents += [(os.path.join(args.plot, files.safe_name(label(a.path), (".png",))),
                                single(a, args.workload, args.sort, args.p99_bound))
                               for a in analyses]
        try:
            os.makedirs(args.plot, exist_ok=True)
        except OSError as exc:
            raise ReportError("--plot %s: %s" % (args.plot, exc.strerror or exc)) from None
        for directory, doc in plot_documents:
            if directory != args.plot:
                files.make_folder(directory, "--plot")
            for written in write_plots(doc, directory, args.files):
                print("wrote %s" % written, file=sys.stderr)


def gate_lines(analyses, fail_on, workloads=None):
    """--fail-on: (whether a row fails it, the lines that say which and by
    how much) of the base and the new file (``analysis.gate``)."""
    base, new = (a.selected(workloads) for a in analyses)
    skipped = []
    try:
        changes = gate(base, new, skipped=skipped)
    except GateError as exc:
        raise ReportError("--fail-on: %s and %s: %s" % (
            analyses[0].path, analyses[1].path, exc)) from None
    failing = [c for c in changes if c.fails(fail_on)]
    untold = [c.name for c in changes if c.ratio is None or c.ratio.low is None]
    if len(untold) == len(changes):
        raise ReportError("--fail-on: no row of the %d in both files has 2 rounds in each: "
                          "nothing can be judged (more rounds: -p, --max-time)" % len(changes))
    lines = ["fail-on %s: %s of %d rows %s beyond the same-within-%s band (%s over the "
             "%d together; each row's speedup against its own file's reference, %s "
             "against %s)" % (fail_on, len(failing) or "none", len(changes),
                              "slower" if fail_on == "slower" else "changed", BAND_TEXT,
                              LEVEL_TEXT, len(changes), label(analyses[1].path),
                              label(analyses[0].path))]
    for change in failing:
        base_row, new_row = change.rows
        lines.append("  %s: %s, its speedup %.2fx -> %.2fx against %s" % (
            change.name, describe(change.ratio), base_row.speedup, new_row.speedup,
            base_row.reference.model))
    judged = [c for c in changes if c.reach() is not None]
    if judged:
        reach = statistics.median(c.reach() for c in judged)
        rounds = sorted({c.ratio.rounds for c in judged})
        lines.append("  the change a row needed to fail it: %s (the median row, %s rounds a "
                     "file); more rounds (-p, --max-time) find smaller ones" % (
                         "%.2fx or more" % reach if reach < 100 else "more than 100x",
                         "-".join(map(str, rounds[::max(1, len(rounds) - 1)]))))
    if untold:
        lines.append("  not judged, with fewer than 2 rounds in a file: " + ", ".join(untold))
    reasons = {}
    for name, why in skipped:
        reasons.setdefault(why, []).append(name)
    for why, names in reasons.items():
        lines.append("  not compared, %s: %s" % (why, ", ".join(names)))
    for analysis in analyses:
        if any(control_state(row) in (rules.FASTER, rules.SLOWER)
               for row in analysis.controls.values()):
            lines.append("  %s: its A/A control came out faster or slower: the machine moved "
                         "under that run, and so may the gate's answer" % analysis.path)
    return bool(failing), lines


def describe(ratio):
    """"1.62x slower [1.40-1.85]" of a ratio new / base of speedups."""
    point, low, high = 1 / ratio.point, 1 / ratio.high, 1 / ratio.low
    if ratio.point >= 1:
        point, low, high = ratio.point, ratio.low, ratio.high
    return "%.2fx %s [%.2f-%.2f]" % (point, "slower" if ratio.point < 1 else "faster",
                                     low, high)

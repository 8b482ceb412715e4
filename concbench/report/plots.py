"""Charts from the document, the same for ``--plot`` (PNG) and the page
(inline SVG): per workload, the speedup with its 95% interval on a log
axis, the time against the ideal, the process tree's memory; the speedup
against the worker count of each series; for several files, each file's
time and the change with its interval."""

import io
import re

from concbench import schema as K

from concbench.formatting import format_time

from .columns import MIB, memory_sources
from concbench.analysis.rows import CLUSTER_RSS, TREE_PSS
from concbench import rules
from concbench.rules import LEVEL_TEXT
from .document import is_comparison, label
from .files import safe_name

WIDE = 20       # a range wider than this many times gets a log axis
FASTER, SLOWER, NEUTRAL = "#2a7d4f", "#b23a3a", "#7f7f7f"


def pyplot():
    """matplotlib's pyplot on a file-only backend, None when not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    # Names and parameters from a file reach the charts as literal text:
    # "$x$" in a model's name is no formula (matplotlib's mathtext would
    # typeset it, or fail on it).
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "concbench",
                                "font.size": 10, "text.parse_math": False})
    import matplotlib.pyplot as plt
    return plt


# The endings workload_charts gives a workload's name: a workload whose own
# name ends so is given a digest (``files.safe_name``).
CHART_ENDINGS = ("-scaling", "-latency")


def workload_charts(plt, name, entry):
    """[(suffix, figure)] for one workload of a one-file document."""
    charts = [("", models_figure(plt, name, entry))]
    scaling = scaling_figure(plt, name, entry)
    if scaling is not None:
        charts.append(("-scaling", scaling))
    waits = latency_figure(plt, name, entry)
    if waits is not None:
        charts.append(("-latency", waits))
    return charts


def latency_figure(plt, name, entry):
    """Each model's latency against the percentile, both on log axes: the
    percentile as its nines (50, 90, 99, 99.9), the largest at the right."""
    import math

    import matplotlib.ticker

    rows = [d for d in entry["rows"] if d.get("latency_curve")]
    if not rows:
        return None
    figure, axis = plt.subplots(figsize=(9, 4.2))

    def nines(share):
        return -math.log10(1 - min(share, 99.99) / 100.0)
    for index, d in enumerate(rows):
        shares = [share for share, _ in d["latency_curve"]]
        # The colour cycle has 10 colours: a line style tells the 11th from the 1st.
        axis.plot([nines(s) for s in shares], [v for _, v in d["latency_curve"]],
                  marker="o", markersize=3, label=d[K.MODEL],
                  linestyle=("-", "--", ":")[index // 10 % 3])
    ticks = [50, 90, 99, 99.9, 100]
    axis.set_xticks([nines(s) for s in ticks])
    axis.set_xticklabels(["p50", "p90", "p99", "p99.9", "max"])
    axis.set_yscale("log")
    # 1, 2 and 5 of every decade labelled: one label per decade left most
    # lines without a value to read.
    axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: format_time(v)))
    axis.set_ylabel("latency")
    axis.set_title("%s: each item's wait for its result" % name)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    figure.tight_layout()
    return figure


def _height(count):
    return max(2.6, 0.32 * count + 1.6)


def _log_if_wide(axis, values, which="x"):
    import matplotlib.ticker

    values = [v for v in values if v]
    if values and max(values) / min(values) > WIDE:
        (axis.set_xscale if which == "x" else axis.set_yscale)("log")
        ticks = axis.xaxis if which == "x" else axis.yaxis
        ticks.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))


def _ratio_axis(axis, which="x"):
    """A log axis of ratios, labelled 0.5x, 1x, 2x, 5x, ..."""
    import math

    import matplotlib.ticker

    def major(value, _):
        return "%gx" % value

    (axis.set_xscale if which == "x" else axis.set_yscale)("log")
    ticks = axis.xaxis if which == "x" else axis.yaxis

    def minor(value, _):
        # Across a narrow range, every minor tick; else 2x, 5x, 20x, ...
        low, high = sorted(ticks.get_view_interval())
        mantissa = value / 10 ** math.floor(math.log10(value) + 1e-9)
        return "%gx" % round(value, 2) if high / low < 4 or round(mantissa) in (2, 5) else ""

    ticks.set_major_formatter(matplotlib.ticker.FuncFormatter(major))
    ticks.set_minor_formatter(matplotlib.ticker.FuncFormatter(minor))


def _legend_below(axis):
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06 - 0.4 / axis.figure.get_figheight()),
                ncol=2, fontsize=8, frameon=False)


def _interval(axis, point, place, low, high, colour):
    """The point, and its 95% interval drawn from its own ends: an interval
    intersected with its earlier ones (``stats.ratio_of``) may leave the
    point outside it, which an error bar around the point cannot draw."""
    if low is not None:
        axis.plot([low, high], [place, place], color=colour, marker="|", markersize=7)
    axis.plot([point], [place], "o", color=colour, markersize=4)


def _colour(row):
    return {rules.FASTER: FASTER, rules.SLOWER: SLOWER}.get(row["verdict"], NEUTRAL)


# How a chart draws a benchmark's values, by pyperf's unit: (scale, title).
VALUE_AXES = {"second": (1e3, "time per batch (ms)"), "byte": (1 / 1024, "value (KiB)"),
              "integer": (1.0, "value")}


def unit_of(rows):
    """The unit of every row's values, or None where they differ."""
    units = {row.get("unit") or "second" for row in rows}
    return units.pop() if len(units) == 1 else None


def models_figure(plt, name, entry):
    rows = entry["rows"]
    labels = [row[K.MODEL] for row in rows]
    places = list(range(len(rows)))
    fig, (speed, time, memory) = plt.subplots(
        1, 3, figsize=(15, _height(len(rows))), sharey=True)
    # Speedup against the reference: a bar from 1, the 95% interval, the value.
    for place, row in zip(places, rows):
        point = row["speedup"]
        if point is None:
            continue
        speed.plot([1, point], [place, place], color=_colour(row), linewidth=6,
                   alpha=0.35, solid_capstyle="butt")
        low, high = row["speedup_ci_low"], row["speedup_ci_high"]
        _interval(speed, point, place, low, high, _colour(row))
        speed.annotate("%.2fx" % point, (high or point, place), xytext=(4, 0),
                       textcoords="offset points", va="center", fontsize=8)
    speed.axvline(1, color="black", linewidth=0.8)
    _ratio_axis(speed)
    bounds = [v for row in rows for v in (row["speedup"], row["speedup_ci_low"],
                                          row["speedup_ci_high"]) if v]
    if bounds:
        speed.set_xlim(min(min(bounds), 0.5) / 1.3, max(max(bounds), 2) * 1.8)
    speed.set_title("speedup against %s (%s interval, log)"
                    % (entry["reference"] or "the reference", LEVEL_TEXT))
    if not any(row["speedup"] for row in rows):
        speed.text(0.5, 0.5, "no speedup: no reference model\nin these benchmarks",
                   transform=speed.transAxes, ha="center", va="center", color=NEUTRAL)
    # Time against the ideal (a plain pyperf file's values may be bytes).
    scale, title = VALUE_AXES.get(unit_of(rows), (1.0, "value (units differ: see the table)"))
    means = [row["mean_s"] * scale for row in rows]
    time.barh(places, means, xerr=[row["stdev_s"] * scale for row in rows],
              color="#4c72b0", alpha=0.8, label="mean +- std dev", capsize=2)
    ideal = [(place, row["ideal_s"] * 1e3) for place, row in zip(places, rows)
             if row["ideal_s"]]
    if ideal:
        time.plot([i[1] for i in ideal], [i[0] for i in ideal], "|", color="black",
                  markersize=14, markeredgewidth=2, label="ideal")
    _log_if_wide(time, means + [i[1] for i in ideal])
    time.set_title(title + (" against the ideal" if ideal else ""))
    _legend_below(time)
    # Memory of the process tree: what was there before the batch, and added;
    # pyperf's figure of one process, or a user's Dask cluster's RSS of its
    # workers, is a peak alone.
    peaks = [(row["mem_peak_bytes"] or 0) / MIB for row in rows]
    added = [(row["mem_added_bytes"] or 0) / MIB for row in rows]
    tree = [row.get("mem_peak_source") in (None, TREE_PSS) for row in rows]
    if any(tree):
        memory.barh(places, [p - a if t else 0 for p, a, t in zip(peaks, added, tree)],
                    color="#b0b0b0", label="before the batches")
        memory.barh(places, [a if t else 0 for a, t in zip(added, tree)],
                    left=[p - a for p, a in zip(peaks, added)], color="#dd8452",
                    label="added by the model")
    for source in memory_sources(rows):
        if source != TREE_PSS:
            memory.barh(places, [p if row.get("mem_peak_source") == source else 0
                                 for p, row in zip(peaks, rows)],
                        color="#ffffff", edgecolor="#555555", hatch="//",
                        label="peak, %s" % (
                            "the cluster's workers' RSS" if source == CLUSTER_RSS
                            else source + " of one process"))
    memory.set_title("peak memory of the process tree (MiB, PSS)" if all(tree)
                     else "peak memory (MiB)")
    _legend_below(memory)
    for axis in (speed, time, memory):
        axis.grid(axis="x", alpha=0.3, which="both")
    speed.set_yticks(places)
    speed.set_yticklabels(labels)
    speed.invert_yaxis()
    fig.suptitle("%s (%s)" % (name, entry["params"]) if entry["params"] else name)
    fig.tight_layout()
    return fig


def scaling_figure(plt, name, entry):
    """Speedup against the worker count, one line per series; None when no
    series has two points."""
    series = {}
    for row in entry["rows"]:
        if row["series"] and row["speedup"]:
            series.setdefault(row["series"], []).append(row)
    series = {k: sorted(v, key=lambda r: r["workers"]) for k, v in series.items()
              if len(v) >= 2}
    if not series:
        return None
    machine = {family: rungs for family, rungs in entry.get("ceiling", {}).items()
               if len(rungs) >= 2}
    import matplotlib.ticker

    fig, axis = plt.subplots(figsize=(7.5, 4.5))
    for name_of, rows in series.items():
        workers = [row["workers"] for row in rows]
        points = [row["speedup"] for row in rows]
        lows = [row["speedup_ci_low"] or row["speedup"] for row in rows]
        highs = [row["speedup_ci_high"] or row["speedup"] for row in rows]
        line, = axis.plot(workers, points, marker="o", label=name_of)
        for count, low, high in zip(workers, lows, highs):
            axis.plot([count, count], [low, high], color=line.get_color(), marker="_")
    for curve in entry.get("curves", []):
        draw_fit(axis, curve)
    for family, rungs in machine.items():
        # What the machine itself gives at each count: read every curve against it.
        axis.plot([r["workers"] for r in rungs], [r["speedup"] for r in rungs],
                  color="black", linestyle=":", marker="s", markersize=4,
                  label="machine ceiling (%s at once)" % family)
    axis.axhline(1, color="gray", linestyle="--", label=entry["reference"] or "reference")
    axis.set_xscale("log", base=2)
    _ratio_axis(axis, "y")
    axis.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%d"))
    axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xlabel("workers")
    axis.set_ylabel("speedup (%s interval, log)" % LEVEL_TEXT)
    axis.set_title("%s: speedup against worker count" % name)
    axis.grid(alpha=0.3, which="both")
    axis.legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_fit(axis, curve):
    """A series' USL fit: solid over the rungs fitted, dotted beyond them,
    where it is a prediction."""
    if curve["serial_fraction"] is None or curve["kappa"] is None:
        return
    top = max(curve["rungs"])
    name = ", ".join(part for part in (curve["family"], curve["series"]) if part)

    def grows(count):
        return 1 + curve["serial_fraction"] * (count - 1) + curve["kappa"] * count * (count - 1)

    def speedup(count):
        return curve["baseline_speedup"] * count / grows(count)

    # Where the denominator reaches 0 (a serial fraction below 0, better
    # than linear), the law has no value: the line stops before it.
    inside = [n for n in (1 + (top - 1) * step / 40 for step in range(41)) if grows(n) > 0]
    beyond = [n for n in (top * 2 ** (step / 20) for step in range(21)) if grows(n) > 0.05]
    line, = axis.plot(inside, [speedup(n) for n in inside], linewidth=0.8, alpha=0.6,
                      label="%s: USL fit on 1-%d" % (name, top))
    axis.plot(beyond, [speedup(n) for n in beyond], linewidth=0.8, alpha=0.6,
              linestyle=":", color=line.get_color(), label="%s: predicted past %d" % (name, top))


def comparison_figure(plt, document, workload):
    """Each file's time per benchmark, and its change against the first file."""
    records = [r for r in document["benchmarks"] if r[K.WORKLOAD] == workload]
    files = document["files"]
    fig, (time, change) = plt.subplots(1, 2, figsize=(14, _height(len(records) * 1.2)),
                                       sharey=True)
    height = 0.8 / len(files)
    places = list(range(len(records)))
    units = unit_of([e for r in records for e in r["files"] if e.get("unit")])
    scale, title = VALUE_AXES.get(units, (1.0, "value (units differ: see the table)"))
    times = []
    for index, path in enumerate(files):
        offset = [p - 0.4 + height * (index + 0.5) for p in places]
        entries = [r["files"][index] for r in records]
        values = [e.get("mean_s", 0) * scale for e in entries]
        times.extend(values)
        time.barh(offset, values, height=height, label=label(path),
                  xerr=[e.get("stdev_s", 0) * scale for e in entries], capsize=2)
        if index:
            for place, e in zip(offset, entries):
                if "not_comparable" in e:
                    change.annotate("not comparable: " + e["not_comparable"], (1, place),
                                    xytext=(6, 0), textcoords="offset points",
                                    va="center", fontsize=8, color=NEUTRAL)
                if e.get("time_ratio") is None:
                    continue
                point, low, high = e["time_ratio"], e["time_ci_low"], e["time_ci_high"]
                _interval(change, point, place, low, high, "C%d" % index)
    _log_if_wide(time, times)
    time.set_title(title + ", mean +- std dev")
    _legend_below(time)
    change.axvline(1, color="black", linewidth=0.8)
    _ratio_axis(change)
    change.set_title("%s against %s's (%s interval, log; < 1: %s)"
                     % ("time" if scale == 1e3 else "value", label(files[0]), LEVEL_TEXT,
                        "faster" if scale == 1e3 else "less"))
    for axis in (time, change):
        axis.grid(axis="x", alpha=0.3, which="both")
    time.set_yticks(places)
    time.set_yticklabels([r["benchmark"].partition("/")[2] or r["benchmark"]
                          for r in records])
    time.invert_yaxis()
    fig.suptitle(workload)
    fig.tight_layout()
    return fig


def all_charts(plt, document):
    """[(file name without extension, figure)] of a document."""
    if is_comparison(document):
        return [("compare-%s" % safe_name(workload), comparison_figure(plt, document, workload))
                for workload in dict.fromkeys(r[K.WORKLOAD] for r in document["benchmarks"])]
    return [(safe_name(name, CHART_ENDINGS) + suffix, figure)
            for name, entry in document["workloads"].items()
            for suffix, figure in workload_charts(plt, name, entry)]


def svg(plt, figure):
    """The figure as an inline <svg> element (the page's style lets it shrink)."""
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    plt.close(figure)
    text = out.getvalue()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


def png(plt, figure, handle):
    """The figure as PNG into ``handle``, a file the report opened (``files.open_own``)."""
    figure.savefig(handle, format="png", dpi=100)
    plt.close(figure)

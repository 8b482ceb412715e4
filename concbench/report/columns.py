"""The columns of a workload's table: each one's title, its key in the
document (and so in JSON and CSV), how it is drawn from a Row, and how its
value is written as text. Renderers write a row from the document alone."""

from concbench import schema as K
from concbench.analysis.stats import half_width
from concbench.formatting import format_time as fmt_time, format_value

from concbench.analysis.latencies import percentile
from concbench.analysis.rows import TREE_PSS
from concbench.rules import LEVEL_TEXT
from concbench.formatting import fmt_ratio

MIB = 1024 * 1024
MEMORY_TITLE = "peak MiB"


def fmt_mib(value):
    return "" if value is None else "%.1f" % (value / MIB)


def fmt_num(value, pattern):
    return "" if value is None else pattern % value


def fmt_pct(value):
    return "" if value is None else "%.0f%%" % (value * 100)


def _faster_in(d):
    if d["speedup_rounds_faster"] is None:
        return ""
    return "%d/%d" % (d["speedup_rounds_faster"], d["speedup_rounds"])


def _ratio_part(which):
    return lambda r: getattr(r.ratio, which) if r.ratio else None


def _shift_part(which):
    return lambda r: getattr(r.reference_shift, which) if r.reference_shift else None


class Column:
    def __init__(self, title, key, raw, text=None, page=None):
        self.title, self.key, self.raw, self.text = title, key, raw, text
        # How the HTML page writes it, when the page shows a column that
        # text tables leave out.
        self.page = page or text

    @property
    def shown(self):
        """Whether text and markdown tables show it (csv and json carry all)."""
        return self.text is not None


COLUMNS = [
    Column("benchmark", "benchmark", lambda r: r.name, lambda d: d["benchmark"]),
    Column("mean +- std dev", "mean_s", lambda r: r.mean,
           lambda d: "%s +- %s" % (format_value(d["mean_s"], d.get("unit")),
                                   format_value(d["stdev_s"], d.get("unit")))),
    # pyperf's unit of the values (a --track-memory file's are bytes).
    Column("", "unit", lambda r: r.unit),
    Column("std dev", "stdev_s", lambda r: r.stdev),
    Column("speedup [%s CI]" % LEVEL_TEXT, "speedup", lambda r: r.speedup,
           lambda d: fmt_ratio(d["speedup"], d["speedup_ci_low"], d["speedup_ci_high"])),
    Column("", "speedup_ci_low", _ratio_part("low")),
    Column("", "speedup_ci_high", _ratio_part("high")),
    Column("faster in", "speedup_rounds_faster", _ratio_part("above"), _faster_in),
    Column("", "speedup_rounds", _ratio_part("rounds")),
    Column("verdict", "verdict", lambda r: r.verdict, lambda d: d["verdict"] or ""),
    # How close in time the paired batches ran, and how much the paired
    # ratios still spread: why a row is undecided (the page shows them).
    Column("pair gap", K.PAIR_GAP_S, lambda r: r.gap,
           page=lambda d: fmt_time(d[K.PAIR_GAP_S])),
    Column("pair log sd", "pair_log_sd", _ratio_part("log_sd"),
           page=lambda d: fmt_num(d["pair_log_sd"], "%.3f")),
    Column("", "speedup_halfwidth", lambda r: half_width(r.ratio)),
    Column("", "reference_shift", _shift_part("point")),
    Column("", "reference_shift_ci_low", _shift_part("low")),
    Column("", "reference_shift_ci_high", _shift_part("high")),
    Column("items/s", "items_per_s", lambda r: r.items_per_s,
           lambda d: fmt_num(d["items_per_s"], "%.0f")),
    Column("ideal", "ideal_s", lambda r: r.ideal, lambda d: fmt_time(d["ideal_s"])),
    Column("", "ideal_from", lambda r: r.ideal_from),
    Column("efficiency", "efficiency", lambda r: r.efficiency,
           lambda d: fmt_pct(d["efficiency"])),
    Column("CPU cores", "cpu_cores", lambda r: r.cores,
           lambda d: fmt_num(d["cpu_cores"], "%.2f")),
    Column("sys CPU", "cpu_system_share", lambda r: r.system_share,
           lambda d: fmt_pct(d["cpu_system_share"])),
    Column(MEMORY_TITLE, "mem_peak_bytes", lambda r: r.mem_peak,
           lambda d: fmt_mib(d["mem_peak_bytes"]) + memory_mark(d)),
    # Which figure the peak is (rows.MEMORY_SOURCES): the tree's PSS, or
    # what pyperf recorded of one process.
    Column("", "mem_peak_source", lambda r: r.mem_source),
    Column("added MiB", "mem_added_bytes", lambda r: r.mem_added,
           lambda d: fmt_mib(d["mem_added_bytes"])),
    # /usr/bin/time's figures per batch, in csv and json only (seeds/002).
    Column("CPU s/batch", "cpu_s_per_batch", lambda r: r.per_batch(K.CPU_TREE)),
    Column("ctx switches/batch", "ctx_switches_per_batch",
           lambda r: r.per_batch(K.CTX_SWITCHES_VOLUNTARY, K.CTX_SWITCHES_INVOLUNTARY)),
    # Each item's wait for its result (concbench.item_stamps): the text table
    # shows p50 and p99, the page every one.
    Column("latency p50/p99", "latency_p50_s", lambda r: percentile(r, 50),
           lambda d: "%s / %s" % (fmt_time(d["latency_p50_s"]), fmt_time(d["latency_p99_s"]))
           if d["latency_p50_s"] is not None else ""),
    Column("p90", "latency_p90_s", lambda r: percentile(r, 90),
           page=lambda d: fmt_time(d["latency_p90_s"])),
    Column("", "latency_p99_s", lambda r: percentile(r, 99)),
    Column("max latency", "latency_max_s", lambda r: percentile(r, 100),
           page=lambda d: fmt_time(d["latency_max_s"])),
    Column("items timed", "latency_items", lambda r: r.latency.total if r.latency else None,
           page=lambda d: fmt_num(d["latency_items"], "%d")),
    Column("failures", K.FAILURES, lambda r: r.failures,
           lambda d: "" if d[K.FAILURES] is None else str(d[K.FAILURES])),
    Column("flags", "flags", lambda r: ",".join(r.flags), lambda d: d["flags"]),
]

SHOWN = [column for column in COLUMNS if column.shown]


class Cell:
    """A column of a text table, by name (report.py --columns NAME)."""

    def __init__(self, name, title, text):
        self.name, self.title, self.text = name, title, text


# What a text table can show: every column markdown shows, under its key
# in the document (and in JSON and CSV), and two that a narrow table uses
# in their place: the model alone (the table is under its workload's
# title) and p99 alone.
CELLS = {c.key: Cell(c.key, c.title, c.text) for c in SHOWN}
CELLS[K.MODEL] = Cell(K.MODEL, K.MODEL, lambda d: d[K.MODEL])
CELLS["latency_p99_s"] = Cell("latency_p99_s", "p99", lambda d: fmt_time(d["latency_p99_s"]))
# Text tables are as wide as their cells, not their titles (the page keeps
# "CPU cores").
CELLS["cpu_cores"].title = "cores"
# The text table by default: what a reader scans, within 120 columns (the
# flags wrap inside theirs).
NARROW = [K.MODEL, "mean_s", "speedup", "verdict", "cpu_cores", "mem_peak_bytes",
          "latency_p99_s", "flags"]
# --columns all: every column markdown shows.
EVERY = [c.key for c in SHOWN]


# The memory sources as a title or a marked cell names them.
SHORT = {TREE_PSS: "PSS", "pyperf RSS": "RSS", "cluster RSS": "cluster RSS"}


def memory_mark(d):
    """" RSS" after a cell whose source is not its column's first."""
    return " " + SHORT.get(d["mem_peak_source"], d["mem_peak_source"]) \
        if d.get("mem_peak_marked") else ""


def memory_sources(records):
    """The sources of the peak memory of ``records`` (a table's rows, or
    entries of files), each once, in order (``rows.MEMORY_SOURCES``)."""
    return list(dict.fromkeys(d["mem_peak_source"] for d in records
                              if d.get("mem_peak_source")))


def memory_title(records, title=MEMORY_TITLE):
    """The memory column's title: as it is where every figure is the tree's
    PSS (the suite's own); else naming its sources, the first one that of
    the cells left unmarked (``mark_memory``)."""
    sources = memory_sources(records)
    if not sources or sources == [TREE_PSS]:
        return title
    return "%s (%s)" % (title, " or ".join(SHORT.get(s, s) for s in sources))


def mark_memory(records):
    """Mark the rows whose memory is not of the column's first source, so
    that their cells name their own (``memory_title``)."""
    sources = memory_sources(records)[:1]
    for d in records:
        if d.get("mem_peak_source") not in [None] + sources:
            d["mem_peak_marked"] = True
    return records


def titles(shown, records):
    """The titles of the columns ``shown`` (Columns or Cells) over ``records``."""
    return [memory_title(records, c.title) if key_of(c) == "mem_peak_bytes" else c.title
            for c in shown]


def key_of(column):
    return getattr(column, "key", None) or getattr(column, "name", None)


def cells(names):
    """The Cells of ``names`` (None: the narrow default; ["all"]: every
    one); an unknown name is a ValueError naming the known ones."""
    if names is None:
        names = NARROW
    elif names == ["all"]:
        names = EVERY
    unknown = [n for n in names if n not in CELLS]
    if unknown:
        raise ValueError("unknown column %s; the columns are: all, %s" % (
            ", ".join(unknown), ", ".join(CELLS)))
    return [CELLS[n] for n in names]
# The page's table: the text table's columns and those it adds.
ON_PAGE = [column for column in COLUMNS if column.page is not None]

SORT_KEYS = {
    "name": None,
    "time": lambda r: r.mean,
    "speedup": lambda r: -(r.speedup or 0),
    "memory": lambda r: r.mem_peak if r.mem_peak is not None else float("inf"),
    "cpu": lambda r: r.cores if r.cores is not None else float("inf"),
    "efficiency": lambda r: -(r.efficiency or 0),
    # The tail first: what a caller waits for at worst, but for 1 in 100.
    "latency": lambda r: percentile(r, 99) if r.latency else float("inf"),
}


def sort_rows(rows, key):
    if SORT_KEYS.get(key) is None:
        return list(rows)
    return sorted(rows, key=SORT_KEYS[key])


def row_record(row):
    """The document's record of a row: every column's raw value."""
    return {column.key: column.raw(row) for column in COLUMNS}


def table(headers, body, markdown=False):
    """Markdown, or text whose columns are as wide as their widest cell or
    title, two spaces apart (tabulate pads a title by 2 more by default:
    a table of short figures under long titles is then 12 wider)."""
    import tabulate

    if markdown:
        return tabulate.tabulate(body, headers=headers, tablefmt="github",
                                 disable_numparse=True)
    padding, tabulate.MIN_PADDING = tabulate.MIN_PADDING, 0
    try:
        return tabulate.tabulate(body, headers=headers, tablefmt="simple",
                                 disable_numparse=True)
    finally:
        tabulate.MIN_PADDING = padding

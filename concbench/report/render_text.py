"""The document as text or markdown tables (tabulate draws them)."""

from concbench import rules
from concbench import schema as K

from concbench.formatting import WIDTH, fmt_ratio, wrapped

from .columns import cells, fmt_mib, memory_mark, memory_title, table, titles
from .compare import describe_change
from .document import is_comparison, label
from concbench.formatting import format_value
from concbench.thresholds import AGREE


def render(document, markdown=False, columns=None):
    """Text (within 120 columns: the narrow table, lines wrapped) or
    markdown (every column, lines as they are). ``columns``: the names
    of report.py --columns, for either."""
    if is_comparison(document):
        return render_comparison(document, markdown)
    shown = cells(columns if columns is not None or not markdown else ["all"])
    lines = list(document["header"]) + list(document["notes"])
    bullet = "- " if markdown else "  * "
    for name, entry in document["workloads"].items():
        lines.append("")
        title = "## %s" % name if markdown else name
        lines.append(title + (" (%s)" % entry["params"] if entry["params"] else ""))
        lines.append("")
        headers = titles(shown, entry["rows"])
        body = [[c.text(d) for c in shown] for d in entry["rows"]]
        if not markdown:
            body = without_verdict_flag(shown, body)
        lines.append(table(headers, body if markdown else
                           fitted(headers, body, [len(headers) - 1]), markdown))
        said = workload_control(entry) + entry["takeaways"]
        if said:
            lines.append("")
            lines.extend(bullet + t for t in said)
    if document.get("sweeps"):
        lines.append("")
        lines.extend(bullet + line for line in document["sweeps"])
    return joined(lines, markdown)


def joined(lines, markdown):
    """Markdown as it is; text with each line that is not a table wrapped
    within the width."""
    if markdown:
        return "\n".join(lines)
    return "\n".join(part for line in lines for part in
                     (wrapped(line) if "\n" not in line else [line]))


def without_verdict_flag(shown, body):
    """The flags without "undecided" where the verdict column says so."""
    names = [c.name for c in shown]
    if "verdict" not in names or "flags" not in names:
        return body
    i = names.index("flags")
    return [row[:i] + [",".join(f for f in row[i].split(",") if f != "undecided")]
            + row[i + 1:] for row in body]


def fitted(headers, body, columns):
    """The rows with the cells of ``columns`` (indexes, in the order to
    try) wrapped, at spaces or commas, so that the table fits the width
    where it can; a column no narrower than its title, nor than its
    longest name. By default the flags' list wraps; in a comparison, the
    changes."""
    body = [list(row) for row in body]

    def width(i):
        return max([len(headers[i])] + [len(line) for row in body
                                         for line in row[i].split("\n")])
    for i in columns:
        excess = sum(map(width, range(len(headers)))) + 2 * (len(headers) - 1) - WIDTH
        if excess <= 0:
            break
        room = max(width(i) - excess, len(headers[i]),
                   max((least_width(row[i]) for row in body), default=0))
        for row in body:
            row[i] = "\n".join(lines_of(row[i], room))
    return body


def least_width(text):
    """The narrowest ``lines_of`` can make ``text``: its longest word, a
    mean over its spread as two lines."""
    mean, spread, deviation = text.partition(" +- ")
    if spread:
        return max(len(mean), len(spread.lstrip() + deviation))
    return max((len(word) for word in text.replace(",", ", ").split()), default=0)


def lines_of(text, width):
    """``text`` in lines of at most ``width``, broken after a comma or at a
    space, never inside a name."""
    import re

    lines = [""]
    mean, spread, deviation = text.partition(" +- ")
    if spread and least_width(text) <= width:
        return [mean, spread.lstrip() + deviation]
    for word in re.findall(r"[^ ,]+,?|[ ]+", text):
        if lines[-1] and len(lines[-1] + word.rstrip()) > width:
            lines.append("")
        lines[-1] += word if lines[-1] or word.strip() else ""
    return [line.rstrip() for line in lines]


def workload_control(entry):
    """The workload's A/A control, in one line (none for plain pyperf
    benchmarks, which have no reference either)."""
    control = entry["control"]
    if control is None and entry["reference"] is None:
        return []
    if control is None:
        return ["control: none (no A/A control of this workload in the file)"]
    return ["control: %s against itself %s, %s after %d rounds%s" % (
        control[K.CONTROL_OF], fmt_ratio(control["speedup"], control["speedup_ci_low"],
                                         control["speedup_ci_high"]),
        control["verdict"], control["rounds"],
        "" if control["verdict"] in (rules.SAME, rules.UNDECIDED)
        else ": UNTRUSTED, the intervals do not hold here")]


def render_markdown(document):
    return render(document, markdown=True)


def comparison_headers(labels, records=()):
    """The comparison's titles; ``records``: the table's benchmarks, whose
    memory figures each file's memory title names (``memory_title``)."""
    headers = ["benchmark"]
    # A plain pyperf file's values may be bytes or numbers (their unit).
    word = "time" if all(e.get("unit", "second") == "second" for r in records
                         for e in r["files"]) else "value"
    for i, name in enumerate(labels):
        headers.append("%s %s" % (name, word))
        if i:
            headers.append("%s change" % word)
        headers.append(memory_title([r["files"][i] for r in records], "%s MiB" % name))
        if i:
            headers.append("memory change")
    return headers


def comparison_entries(record):
    """A benchmark's cells after its name, as (text, key, raw value): each
    file's time and memory, and for every file after the first, the changes.
    Keys are "<file index>:<entry key>"."""
    cells = []
    for i, entry in enumerate(record["files"]):
        if "mean_s" not in entry:
            cells.extend([("", "", None)] * (2 if not i else 4))
            continue

        def cell(text, key, i=i, entry=entry):
            cells.append((text, "%d:%s" % (i, key), entry.get(key)))
        cell("%s +- %s" % (format_value(entry["mean_s"], entry.get("unit")),
                           format_value(entry["stdev_s"], entry.get("unit"))), "mean_s")
        if i:
            cell("not comparable: " + entry["not_comparable"]
                 if "not_comparable" in entry else
                 describe_change(entry.get("time_change"), entry.get("time_significant")),
                 "time_ratio")
        cell(fmt_mib(entry.get("mem_peak_bytes")) + memory_mark(entry), "mem_peak_bytes")
        if i:
            cell("not comparable" if "not_comparable" in entry else
                 "not comparable: " + entry["mem_not_comparable"]
                 if "mem_not_comparable" in entry else
                 describe_change(memory_change(entry), entry.get("mem_significant")),
                 "mem_change_pct")
    return cells


def comparison_cells(record):
    """The texts of comparison_entries()."""
    return [text for text, _, _ in comparison_entries(record)]


def memory_change(entry):
    pct = entry.get("mem_change_pct")
    interval = entry.get("mem_change_ci_pct")
    return None if pct is None else "%+.1f%%" % pct + (
        " [%+.1f%%, %+.1f%%]" % tuple(interval) if interval else "")


def best_line(document, workload):
    """Each file's fastest model: the answer, or while the race is open,
    "undecided" with the model that leads (not every model of the race);
    None for a workload of plain pyperf benchmarks, which race nothing."""
    best = document["best"].get(workload)
    if best is None:
        return None

    def said(entry):
        if not entry:
            return "-"
        if not entry["answered"]:
            return "undecided (%s leads)" % entry["leader"]
        return ", ".join(entry["models"])
    return "best: " + "; ".join("%s %s" % (label(path), said(best.get(path)))
                                for path in document["files"])


def agreement_line(document, found):
    return "%s against %s: %s; %s" % (
        found["file"], document["files"][0],
        "speedups within %s of each other: %d of %d"
        % (rules.percent(AGREE - 1), found["speedups_within_10pct"], found["speedups"])
        if found["speedups"] else "no speedup in both",
        "no takeaway in both" if not found.get("takeaways", 1) else
        "takeaways: none contradicts" if not found["contradictions"] else
        "takeaways that contradict: " + "; ".join(found["contradictions"]))


def render_comparison(document, markdown):
    lines = list(document["header"])
    # One table per workload (a version's or a build's change reads per
    # workload), then each file's best model of it.
    for workload in dict.fromkeys(r[K.WORKLOAD] for r in document["benchmarks"]):
        lines.append("")
        lines.append("## %s" % workload if markdown else workload)
        lines.append("")
        records = [r for r in document["benchmarks"] if r[K.WORKLOAD] == workload]
        headers = comparison_headers([label(p) for p in document["files"]], records)
        body = [[r["benchmark"]] + comparison_cells(r) for r in records]
        # The changes wrap first, then, where a workload's longest name
        # leaves no room, the times (a mean over its spread).
        changes = [i for i, h in enumerate(headers) if h.endswith(" change")]
        times = [i for i, h in enumerate(headers) if h.endswith((" time", " value"))]
        lines.append(table(headers, body if markdown else
                           fitted(headers, body, changes[::-1] + times[::-1]), markdown))
        best = best_line(document, workload)
        if best:
            lines.append("")
            lines.append(("- " if markdown else "  * ") + best)
    lines.append("")
    lines.extend(agreement_line(document, found) for found in document["agreement"])
    return joined(lines, markdown)

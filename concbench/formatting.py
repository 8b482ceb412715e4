"""How times and ratios are written, the same on the console and in the report."""


def format_time(seconds):
    """1.23 s, 45.6 ms, 789 us; empty for None."""
    if seconds is None:
        return ""
    if seconds >= 1.0:
        return "%.2f s" % seconds
    if seconds >= 0.001:
        return "%.3g ms" % (seconds * 1e3)
    return "%.3g us" % (seconds * 1e6)


def format_value(value, unit="second"):
    """A benchmark's value in its own unit (pyperf's ``unit`` metadata), as
    ``pyperf show`` writes it: seconds as times, bytes as bytes, KiB or MiB
    (``--track-memory``, ``--tracemalloc``), anything else as a number."""
    if value is None:
        return ""
    if unit in (None, "second"):
        return format_time(value)
    if unit == "byte":
        if value < 10 * 1024:
            return "%.0f bytes" % value
        if value > 10 * 1024 * 1024:
            return "%.1f MiB" % (value / (1024.0 * 1024.0))
        return "%.1f KiB" % (value / 1024.0)
    return "%.6g" % value


def fmt_ratio(point, low, high):
    """2.05x [1.90-2.21]; the point alone when there is no interval."""
    if point is None:
        return ""
    if low is None:
        return "%.2fx" % point
    return "%.2fx [%.2f-%.2f]" % (point, low, high)


def count(number, nouns):
    """1 round, 3 rounds (``nouns``: the plural)."""
    return "%d %s" % (number, nouns[:-1] if number == 1 else nouns)


# The width a terminal line of the report and of bench.py's console keeps
# to: that of pyperf's, hyperfine's and benchstat's tables.
WIDTH = 120


def wrapped(line, width=WIDTH):
    """``line`` as lines of at most ``width`` characters where it has
    spaces to break at, the later ones indented under its text (four more
    than a plain line's indent, or under a bullet's text). A name is never
    broken (threads-2-chunk-4 stays whole, however long)."""
    import textwrap

    if len(line) <= width:
        return [line]
    body = line.lstrip()
    indent = line[:len(line) - len(body)]
    more = indent + ("  " if body.startswith(("* ", "- ")) else "    ")
    return textwrap.wrap(line, width, subsequent_indent=more,
                         break_long_words=False, break_on_hyphens=False)

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

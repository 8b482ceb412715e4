"""How times are written, the same on the console and in the report."""


def format_time(seconds):
    """1.23 s, 45.6 ms, 789 us; empty for None."""
    if seconds is None:
        return ""
    if seconds >= 1.0:
        return "%.2f s" % seconds
    if seconds >= 0.001:
        return "%.3g ms" % (seconds * 1e3)
    return "%.3g us" % (seconds * 1e6)

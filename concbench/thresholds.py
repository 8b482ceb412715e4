"""The limits that decide a flag, each defined once for bench.py and report.py."""

#: The share of its arrival rate an open-loop run must complete, or it is
#: flagged as overloaded (it fell behind its schedule).
KEPT_UP = 0.95

#: Two files' speedups of a row agree when the larger is within this
#: factor of the smaller (the agreement line of a comparison; its JSON key
#: keeps the name ``speedups_within_10pct``).
AGREE = 1.10

#: The share of a batch's wall time the load server may spend on CPU before
#: the result is flagged as server-bound (the server, not the model, may
#: have set the pace).
SERVER_BUSY_LIMIT = 0.5

# A benchmark is flagged "unstable" when any of these holds (the same rules
# as pyperf's own warning, so that the flag and pyperf agree):
#: the standard deviation is at least this share of the mean;
UNSTABLE_STDEV = 0.10
#: the minimum or the maximum is at least this share away from the mean;
UNSTABLE_OUTLIER = 0.50
#: the shortest raw value (value x loops) is under this many seconds.
UNSTABLE_SHORTEST_S = 1e-3


def server_busy(server_cpu, seconds):
    """The server's CPU seconds as a share of ``seconds`` of wall time."""
    return server_cpu / seconds if seconds > 0 else 0.0


def unstable_reasons(values, raw_values):
    """Why a benchmark's values may be unstable (empty if they are not).

    ``values`` are the timed values, ``raw_values`` the same times the loops.
    """
    import statistics

    reasons = []
    if not values:
        return reasons
    mean = statistics.mean(values)
    if len(values) >= 2 and mean > 0:
        share = statistics.stdev(values) / mean
        if share >= UNSTABLE_STDEV:
            reasons.append("the standard deviation is %.0f%% of the mean"
                           % (share * 100))
    for what, value in (("minimum", min(values)), ("maximum", max(values))):
        if mean > 0 and abs(value - mean) / mean >= UNSTABLE_OUTLIER:
            reasons.append("the %s is %.0f%% away from the mean"
                           % (what, abs(value - mean) / mean * 100))
    if raw_values and min(raw_values) < UNSTABLE_SHORTEST_S:
        reasons.append("the shortest raw value is under %g ms"
                       % (UNSTABLE_SHORTEST_S * 1e3))
    return reasons

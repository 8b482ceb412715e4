"""The machine's own ceiling as a file records it (``concbench.run.ceiling``
measures it): its speedup at each worker count, read for the header and
the scaling chart, never as a row."""

import math

from concbench import schema

# The most workers a rung may have (the ladder's 2U, for --cpus up to 4096).
MOST_WORKERS = 8192


def is_ceiling(meta):
    return schema.CEILING in meta


class Rung:
    """The machine's speedup at ``count`` workers of one family: ``point``
    (N x time(1) / time(N), the geometric mean over the rounds that ran both),
    [``low``, ``high``] its 95% interval (None while there is none), and how
    many ``rounds`` paired."""

    def __init__(self, count, point, low, high, rounds):
        self.count, self.point, self.low, self.high = count, point, low, high
        self.rounds = rounds

    def record(self):
        return {"workers": self.count, "speedup": self.point, "speedup_ci_low": self.low,
                "speedup_ci_high": self.high, "rounds": self.rounds}


def rungs_of(suite):
    """{family: [Rung, in worker order, 1 first]} of the ceiling benchmarks
    in ``suite``; {} where it has none."""
    from concbench.analysis.pairs import in_worker
    from concbench.analysis.stats import ratio_of

    found = {}
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        if not is_ceiling(meta):
            continue
        count, family = meta.get(schema.PARALLELISM), meta[schema.CEILING]
        if type(count) is not int or not 2 <= count <= MOST_WORKERS \
                or not isinstance(family, str) or not family.isidentifier() \
                or len(family) > 40 or any(r.count == count for r in found.get(family, ())):
            continue    # not a ceiling bench.py wrote
        timed = [(run, run.get_metadata()) for run in bench.get_runs() if run.values]
        logs, _, _, floor = in_worker("worker", timed)
        ratio = ratio_of({r: math.exp(log) for r, log in logs.items()}, floor=floor)
        if ratio is None or not 1e-3 < ratio.point < 1e6:
            continue
        found.setdefault(family, [Rung(1, 1.0, None, None, 0)]).append(
            Rung(count, ratio.point, ratio.low, ratio.high, ratio.rounds))
    return {family: sorted(rungs, key=lambda rung: rung.count)
            for family, rungs in sorted(found.items())}


def describe(family, rungs):
    """One line: "processes 1.97x at 2 [1.93-2.01], 1.99x at 4"."""
    parts = []
    for rung in rungs:
        if rung.count == 1:
            continue
        text = "%.2fx at %d" % (rung.point, rung.count)
        if rung.low is not None:
            text += " [%.2f-%.2f]" % (rung.low, rung.high)
        parts.append(text)
    return "%s %s" % (family, ", ".join(parts) if parts else "at 1 only")

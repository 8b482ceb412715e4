"""How each row's rounds vary, measured on a long run's file (docs/figures.md,
"How a row's rounds vary: autocorrelation and skew"): the lag-1
autocorrelation and the skewness of its per-round log speedups, in round
order, and for rows paired by round the skewness of the reference's
per-round log times and of the row's own.
The confidence sequence assumes independent, Gaussian rounds; these say
how far a machine's rounds are from that.

    ./bench.py --workload encode,rotate -p 16 -o cpu.json
    ./bench.py --workload sleep,http \
        --model sequential,threads-8,threads-32,asyncio,uvloop,hybrid-2 -p 16 -o io.json
    python research/measure_rounds.py cpu.json io.json
"""

import math
import statistics
import sys

import pyperf

from concbench.analysis.rows import build_rows

# Rows with fewer rounds say too little of either.
LEAST_ROUNDS = 8


def lag1(values):
    middle = statistics.fmean(values)
    squares = sum((v - middle) ** 2 for v in values)
    if not squares:
        return 0.0
    return sum((a - middle) * (b - middle) for a, b in zip(values, values[1:])) / squares


def skewness(values):
    middle, spread = statistics.fmean(values), statistics.pstdev(values)
    if not spread:
        return 0.0
    return sum(((v - middle) / spread) ** 3 for v in values) / len(values)


def logs_in_order(by_round):
    return [math.log(by_round[r]) for r in sorted(by_round) if by_round[r] > 0]


def shapes(path):
    """[(row, pairing, rounds, lag-1 r, skewness, reference's skewness or None,
    own skewness or None)] of a file's rows (controls included)."""
    controls = {}
    groups = build_rows(pyperf.BenchmarkSuite.load(path), controls)
    found = []
    for workload, rows in groups.items():
        for row in rows + ([controls[workload]] if workload in controls else []):
            speedups = row.speedups() if row.reference is not None else None
            if not speedups or len(speedups) < LEAST_ROUNDS:
                continue
            logs = logs_in_order(speedups)
            reference = own = None
            if row.pairing == "round" and row.reference.by_round:
                reference = skewness(logs_in_order(row.reference.by_round))
                own = skewness(logs_in_order(row.by_round))
            found.append((row.name, row.pairing, len(logs), lag1(logs), skewness(logs),
                          reference, own))
    return found


def main(paths):
    for path in paths:
        found = shapes(path)
        for name, pairing, rounds, r, skew, reference, own in found:
            print("%-28s %-6s %2d rounds  lag-1 %+.2f  skew %+.2f%s" % (
                name, pairing, rounds, r, skew, "" if reference is None else
                "  reference's skew %+.2f, own %+.2f" % (reference, own)))
        if found:
            lags = [f[3] for f in found]
            print("%s: %d rows, lag-1 median %+.2f (%+.2f to %+.2f), skew median %+.2f\n" % (
                path, len(found), statistics.median(lags), min(lags), max(lags),
                statistics.median(f[4] for f in found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""How much a benchmark's workers differ from one another, against how much
its pairs spread inside one (docs/figures.md, "Between a model's workers:
why the unit is a worker"): a one-way analysis of variance of each pair's
log(reference / model), grouped by worker, for every benchmark paired in
its worker with three workers or more.

    python research/measure_workers.py results/run.json

With no worker effect the ratio follows an F law and is about 1.
"""

import math
import statistics
import sys

import pyperf


def between_over_within(groups):
    """The mean square between the groups over the one within them."""
    k, n = len(groups), sum(map(len, groups))
    grand = sum(map(sum, groups)) / n
    between = sum(len(g) * (statistics.fmean(g) - grand) ** 2 for g in groups) / (k - 1)
    within = sum((x - statistics.fmean(g)) ** 2 for g in groups for x in g) / (n - k)
    return between / within


def worker_groups(bench):
    """Each worker's pairs as log(reference / model)."""
    groups = []
    for run in bench.get_runs():
        reference = run.get_metadata().get("paired_reference_s")
        if run.values and reference and len(reference.split()) == len(run.values) > 1:
            groups.append([math.log(float(r) / v)
                           for r, v in zip(reference.split(), run.values)])
    return groups


def main(paths):
    for path in paths:
        for bench in pyperf.BenchmarkSuite.load(path).get_benchmarks():
            groups = worker_groups(bench)
            if len(groups) >= 3:
                print("%-55s %2d workers %3d pairs  %6.2f" % (
                    bench.get_name(), len(groups), sum(map(len, groups)),
                    between_over_within(groups)))


if __name__ == "__main__":
    main(sys.argv[1:])

"""What the harness does to a model, measured (docs/figures.md, "The harness
leaves the model as it is"): bench.py's speedups against a bare script's
of the same work, and against bench.py's own without each of the harness's
interventions (``--without``).

    python research/measure_harness.py --reps 5 --log harness.jsonl
    python research/measure_harness.py --log harness.jsonl --table   # the tables again
    python research/measure_harness.py --reps 12 --without '' --log bare.jsonl

Each repetition runs the bare script (research/bare_models.py: 8 rounds of
each model, a process per model), then bench.py with everything and
without each intervention, in a seeded order (-p 1 -n 16 -w 1: one worker
a benchmark, 16 timed pairs). A run's figure is the median of its pairs'
log ratios (sequential over the model); a comparison is the mean over the
repetitions of the difference between two runs' figures, with a 95%
Student interval: the repetitions are the unit, since most of this
machine's noise lies between runs. Every line of the log is one run, with
its pairs, so that the tables can be made again from it.
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["threads-2-chunk-125", "processes-2-chunk-125", "asyncio", "hybrid-2"]
INTERVENTIONS = ["partner", "pinning", "prime", "sampler", "probe", "collect"]
T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
        9: 2.26, 10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13}


def bare(python, items):
    pairs = {}
    for model in MODELS:
        proc = subprocess.run([python, os.path.join(HERE, "bare_models.py"), "--items",
                               str(items), "--rounds", "8", model],
                              capture_output=True, text=True, check=True)
        pairs.update(json.loads(proc.stdout))
    return pairs


def bench(python, items, without):
    import pyperf

    folder = tempfile.mkdtemp()
    out = os.path.join(folder, "h.json")
    proc = subprocess.run([python, os.path.join(ROOT, "bench.py"), "--workload", "encode",
                           "--items", str(items), "--model", ",".join(["sequential"] + MODELS),
                           "--no-control", "--quiet", "-p", "1", "-n", "16", "-w", "1",
                           "-o", out] + (["--without", without] if without else []),
                          capture_output=True, text=True, cwd=folder)
    if proc.returncode:
        raise SystemExit(proc.stderr)
    pairs = {}
    for benchmark in pyperf.BenchmarkSuite.load(out).get_benchmarks():
        model = benchmark.get_name().split("/", 1)[1]
        for one in benchmark.get_runs():
            beside = one.get_metadata().get("paired_reference_s")
            if one.values and beside:
                pairs[model] = list(zip(map(float, beside.split()), one.values))
    return pairs


def measure(python, reps, items, log, seed, left_out):
    order = random.Random(seed)
    # Repetitions go on from those the log already holds for this Python.
    done = [json.loads(line)["rep"] for line in open(log)] if os.path.exists(log) else []
    first = max(done) + 1 if done else 0
    with open(log, "a") as out:
        for rep in range(first, first + reps):
            variants = [None] + left_out
            order.shuffle(variants)
            runs = [("bare", bare(python, items))]
            runs += [(variant or "-", bench(python, items, variant)) for variant in variants]
            for variant, pairs in runs:
                out.write(json.dumps({"python": python, "rep": rep, "variant": variant,
                                      "items": items, "pairs": pairs}) + "\n")
            out.flush()
            print("repetition %d of %d done" % (rep + 1 - first, reps), file=sys.stderr)


def figure(pairs):
    return statistics.median(math.log(s / m) for s, m in pairs)


def interval(differences):
    mean = statistics.fmean(differences)
    if len(differences) < 2:
        return "%+.1f%%" % ((math.exp(mean) - 1) * 100)
    half = T975[len(differences) - 1] * statistics.stdev(differences) \
        / math.sqrt(len(differences))
    return "%+.1f%% [%+.1f%%, %+.1f%%]" % tuple(
        (math.exp(x) - 1) * 100 for x in (mean, mean - half, mean + half))


def tables(log):
    runs = {}
    for line in open(log):
        entry = json.loads(line)
        runs.setdefault(entry["python"], {}).setdefault(entry["rep"], {})[
            entry["variant"]] = entry["pairs"]
    for python, reps in runs.items():
        print("%s, %d repetitions" % (python, len(reps)))
        print("| model | bench.py | bare script | bench.py / bare |")
        print("| --- | --- | --- | --- |")
        for model in MODELS:
            both = [r for r in reps.values() if "-" in r and "bare" in r]
            print("| %s | %.2fx | %.2fx | %s |" % (
                model, math.exp(statistics.median(figure(r["-"][model]) for r in both)),
                math.exp(statistics.median(figure(r["bare"][model]) for r in both)),
                interval([figure(r["-"][model]) - figure(r["bare"][model]) for r in both])))
        print()
        left_out = [name for name in INTERVENTIONS
                    if any("-" in r and name in r for r in reps.values())]
        if not left_out:
            continue
        print("| left out | " + " | ".join(MODELS) + " |")
        print("| --- |" + " --- |" * len(MODELS))
        for name in left_out:
            both = [r for r in reps.values() if "-" in r and name in r]
            print("| %s | %s |" % (name, " | ".join(
                interval([figure(r["-"][model]) - figure(r[name][model]) for r in both])
                for model in MODELS)))
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--log", required=True)
    parser.add_argument("--without", default=",".join(INTERVENTIONS),
                        help="the interventions to leave out, one run each "
                        "(none: bench.py against the bare script only)")
    parser.add_argument("--table", action="store_true", help="only print the tables")
    args = parser.parse_args()
    if not args.table:
        left_out = [name for name in args.without.split(",") if name]
        measure(args.python, args.reps, args.items, args.log, args.seed, left_out)
    tables(args.log)


if __name__ == "__main__":
    main()

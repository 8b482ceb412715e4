"""Which batches run when, and which are paired with which.

A speedup is a ratio of a model's batches over the reference's, and a
machine's speed can change in regimes of a second or less, per CPU
(measured in a57d0ca: git show a57d0ca); runs also differ between worker
processes (hash seed, address layout). Two levels answer this.

Rounds. pyperf runs all the processes of one benchmark, then all of the
next, so a slow period lands on one model and becomes a finding. Here each
round runs one worker of every selected benchmark, in an order shuffled
with a recorded seed, so that a slow period is shared by all models
(Google Benchmark's random interleaving), and every comparison is spread
over as many worker processes as it has rounds: the unit its interval
counts (Kalibera & Jones: repeat at the level where the variance is).

Pairs. Where a benchmark's pairing is ``worker`` (``pairing``; CPU
workloads by default), its worker runs a batch of the reference beside
each of its own, the order alternating from one pair to the next (A B,
B A: A B B A over two values; ``reference_first``), so that each ratio
compares neighbours a fraction of a second apart and drift slower than a
batch cancels. The reference's batches are recorded in the run's metadata;
pyperf's values stay the benchmark's own. Where it is ``round`` (IO
workloads by default: their reference waits sequentially and takes many
times as long as the models (measured in a57d0ca: git show a57d0ca), so a
pair would cost that much more, while their rounds already agree
closely), a run is paired with the reference's run of the same round,
which the reference's own worker must then run.

pyperf selects a worker's task by its position among the registered
benchmarks, and refuses two registrations of one name; so the master and
every worker register the same schedule, each task under a name of its own
(``encode/threads-2@3``), and the master files each task's run under the
benchmark's real name with its round number (``round`` in run metadata).
"""

import random

import pyperf

from concbench import schema

# How a benchmark's batches pair with the reference's (its ``pairing``).
IN_WORKER, BY_ROUND, NONE = schema.IN_WORKER, schema.BY_ROUND, schema.NONE
# --pairing: auto picks per workload kind (PAIRED_KINDS pair in the worker).
PAIRINGS = ("auto", IN_WORKER, BY_ROUND)
PAIRED_KINDS = ("cpu",)


def pairing(workload, model, choice="auto", reference=None):
    """How ``model``'s speedup on ``workload`` pairs its batches with the
    reference's (``reference``: its name; the registry's by default):
    "worker", "round", or "none" for the reference itself."""
    if model.name == reference if reference else model.is_reference:
        return "none"
    if choice == "auto":
        return "worker" if workload.kind in PAIRED_KINDS else "round"
    return choice


def reference_first(pairs, round_number):
    """Whether the next pair of a worker starts with the reference's batch,
    after ``pairs`` pairs of this phase (warm-ups, values): the order
    alternates within a run, and from one round to the next, so that a
    worker of one value per phase still alternates across rounds."""
    return (pairs + (round_number or 0)) % 2 == 0



def schedule(count, rounds, seed, interleave=True, extra=()):
    """[(round, index)] for ``count`` benchmarks: ``rounds`` shuffled rounds,
    or (None, index) once each when pyperf's own order is kept; then the
    ``extra`` rounds, each a list of the benchmark indexes it runs."""
    if not interleave:
        return [(None, index) for index in range(count)]
    tasks = []
    for round_number in range(rounds):
        tasks.extend(round_tasks(range(count), seed, round_number))
    for number, members in enumerate(extra, start=rounds):
        tasks.extend(round_tasks(members, seed, number))
    return tasks


def round_tasks(members, seed, round_number):
    """One round of the benchmarks ``members``, in the round's shuffled order."""
    order = sorted(members)
    random.Random("%d/%d" % (seed, round_number)).shuffle(order)
    return [(round_number, index) for index in order]


# Adaptive rounds: the master adds rounds for the undecided benchmarks, and
# tells every worker it starts which (a worker finds its task by position).

def format_extra(extra):
    """--extra-rounds text: rounds separated by '/', indexes by ','."""
    return "/".join(",".join(str(index) for index in members) for members in extra)


def parse_extra(text):
    if not text:
        return []
    return [[int(index) for index in part.split(",") if index]
            for part in text.split("/")]


def runs_before(tasks):
    """For each task of a schedule, how many tasks of its benchmark come
    before it."""
    seen, counts = {}, []
    for _, index in tasks:
        counts.append(seen.get(index, 0))
        seen[index] = counts[-1] + 1
    return counts


def task_name(name, round_number):
    return name if round_number is None else "%s@%d" % (name, round_number)


def next_round(suite):
    """The first round number free in ``suite`` (0 for none), so that an
    --append run continues the numbering."""
    numbers = [run.get_metadata().get(schema.ROUND, -1)
               for bench in (suite.get_benchmarks() if suite else ())
               for run in bench.get_runs()]
    return max(numbers, default=-1) + 1


def filed(result, name, round_number):
    """The task's benchmark under the real ``name``, each run stamped with its
    round (for pyperf's order: the run's position in the benchmark)."""
    runs = []
    for position, run in enumerate(result.get_runs()):
        meta = dict(run.get_metadata(), name=name)
        meta[schema.ROUND] = position if round_number is None else round_number
        runs.append(pyperf.Run(run.values, warmups=run.warmups, metadata=meta,
                               collect_metadata=False))
    return pyperf.Benchmark(runs)

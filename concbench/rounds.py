"""Interleaved rounds: one worker process of every benchmark per round.

This machine's speed changes in regimes of seconds, and runs differ more
between worker processes than within one. pyperf runs all the processes of
one benchmark, then all of the next, so a slow period lands on one model and
becomes a finding. Here each round runs one worker of every selected
benchmark, in an order shuffled with a recorded seed, so that a slow period
is shared by all models, and a model's runs can be paired with the
reference's runs of the same round (Google Benchmark's random interleaving;
Kalibera & Jones: repeat at the level where the variance is).

pyperf selects a worker's task by its position among the registered
benchmarks, and refuses two registrations of one name; so the master and
every worker register the same schedule, each task under a name of its own
(``encode/threads-2@3``), and the master files each task's run under the
benchmark's real name with its round number (``round`` in run metadata).
"""

import random

import pyperf

from concbench import schema


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

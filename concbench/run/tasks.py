"""The tasks of a run as pyperf runs them, on the side a worker needs.

A worker (hundreds in a run) re-executes bench.py, registers every task of
the schedule to count positions, and times the one pyperf selected for it;
it imports nothing of the master's loop (``concbench.run.master``: the
calibration, the allocation, the questions and their statistics), which
the master alone reads.
"""

import contextlib
import io

from concbench.run.matrix import base_count
from concbench.run.partner import model_forked
from concbench.run.schedule import parse_extra, runs_before, schedule, task_name
from concbench.run.worker import time_batches


class TaskFailed(Exception):
    """A worker failed, or ran another task than the one due: one line for
    the user (``status``: the exit status)."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def tasks_of(args, matrix):
    """[(round, benchmark index)] of the schedule, the same in the master
    and in every worker."""
    return schedule(base_count(matrix), args.rounds, args.order_seed,
                    interleave=not args.pyperf_order, extra=parse_extra(args.extra_rounds))


def runs_here(args, index):
    """Whether this process times benchmark ``index``: a worker runs the one
    pyperf selected (or all, without --worker-task); the master none."""
    return args.worker and args.worker_task in (None, index)


def run_worker(runner, args, matrix, results):
    """A worker's tasks: pyperf runs the task at this worker's position;
    the others are registered only to count positions."""
    tasks = tasks_of(args, matrix)
    earlier = runs_before(tasks)
    for position, (round_number, index) in enumerate(tasks):
        bench = matrix[index]
        metadata = None
        if runs_here(runner.args, position):
            bench.round = round_number
            # Its own runs alternate sides, whichever rounds it runs in.
            bench.model_forked = model_forked(
                None if round_number is None else earlier[position])
            bench.warmups = runner.args.warmups or 0
            bench.inputs = args.inputs_folder
            metadata = bench.metadata()
        run_task(runner, bench, task_name(bench.name, round_number), metadata, results)


def pass_over(runner):
    """Count, in the master, a task it does not run to its end (a row ended
    early): a worker finds its task by position, counting every task of the
    schedule (``run_worker``), and pyperf's master counts only those whose
    worker succeeded. pyperf has no public way to advance its count; its
    version is pinned (constraints.txt), and tests/test_dask.py checks
    that every task after one passed over runs where it is due."""
    runner._worker_task += 1


def run_task(runner, bench, name, metadata, results):
    """One bench_time_func call; pyperf's own console output only with -v."""
    quiet = contextlib.nullcontext() if runner.args.verbose or runner.args.worker \
        else contextlib.redirect_stdout(io.StringIO())
    try:
        with quiet:
            return runner.bench_time_func(name, time_batches, bench,
                                          metadata=metadata)
    except RuntimeError as exc:
        # pyperf's master reports a worker that failed this way; the
        # worker printed its own error above.
        raise TaskFailed("benchmark %s failed (%s)%s" % (bench.name, exc,
                                                          kept_note(results))) from None
    except SystemExit as exc:
        # pyperf's master exits 124 when a worker outlives --timeout, after
        # printing why to the stdout that is hidden here.
        if exc.code != TIMED_OUT or runner.args.worker:
            raise
        raise TaskFailed("benchmark %s: its worker ran longer than --timeout %s s and "
                         "was stopped%s" % (bench.name, runner.args.timeout,
                                            kept_note(results)), TIMED_OUT) from None


# pyperf's exit status when a worker timed out (timeout(1)'s).
TIMED_OUT = 124


def kept_note(results):
    """Where the runs of the benchmarks completed so far are kept, if any."""
    if not results or not results.path or not results.saved:
        return ""
    return "; the runs of %d benchmark(s) completed before it are in %s" % (
        results.saved, results.path)

"""bench.py's master loop: the rounds, each benchmark's worker, and the
rounds added while questions are open.

pyperf starts one worker per task (``Runner.bench_time_func``); the master
files each task's run under the benchmark's real name with its round
(``concbench.run.schedule``), tells each worker how many values and warm-ups
to run (``concbench.run.calibration``, through pyperf's own -n and -w), and
after the preset's rounds hands the rest of the budget to
``concbench.run.allocation``.
"""

import statistics
import time

from concbench.run import ceiling
from concbench.schema import beside_of
from concbench.run import calibration, costs
from concbench.run.added_rounds import add_rounds
from concbench.run.allocation import Allocation
from concbench.run.plan import Plan
from concbench.run.cleanup import stop_if_signalled
from concbench.run.matrix import base_count, beside_bench
from concbench.run import progress as console
from concbench.run.progress import Progress, say, unstable_summary
from concbench.run.schedule import filed, next_round, task_name
from concbench.run.tasks import TaskFailed, pass_over, run_task, tasks_of


def run_matrix(runner, args, matrix, results, gil_check):
    """Every task of the schedule, then the added rounds; {name: why} of
    the rows that ended early, their batches lost outside the run.
    ``gil_check(run)``: warns once per benchmark of a worker whose GIL
    state was not the one asked for (True when it did)."""
    tasks = tasks_of(args, matrix)
    plan = Plan(args.max_time, args.precision)
    progress = Progress(len(tasks), len(matrix))
    say("%s: %d benchmarks x %d %s (order seed %d)%s%s" % (
        runner.argparser.prog, len(matrix), args.rounds,
        "processes each, pyperf's order" if args.pyperf_order
        else "interleaved rounds", args.order_seed,
        ", " + plan.describe() if plan.adaptive else "",
        "" if runner.args.verbose else "; -v shows pyperf's output"))
    master = Master(runner, args, matrix, results, progress, gil_check)
    last_task = {index: position for position, (_, index) in enumerate(tasks)}
    base = base_count(matrix)
    for position, (round_number, index) in enumerate(tasks):
        if round_number is not None and position % base == 0:
            if round_number:
                master.read(fixed_left=args.rounds - round_number)
            progress.round_starts(round_number, args.rounds)
        master.run(round_number, index, last_task[index] == position)
    if plan.adaptive:
        add_rounds(master, master.allocation)
    summary = unstable_summary(results.suite)
    if summary:
        say(summary)
    for line in control_summary(results.suite):
        say(line)
    return master.lost


def control_summary(suite):
    """What the A/A controls say of the run, as the report's header says it."""
    from concbench.analysis.controls import control_lines
    from concbench.analysis.rows import build_rows

    if suite is None:
        return []
    controls = {}
    return control_lines(build_rows(suite, controls), controls)


class Master:
    """The master's side of running tasks: files each run, keeps the time
    each benchmark's worker took, and sizes each worker."""

    def __init__(self, runner, args, matrix, results, progress, gil_check):
        self.runner, self.args, self.matrix = runner, args, matrix
        self.results, self.progress = results, progress
        self.gil_check, self.warned = gil_check, set()
        self.first = next_round(results.suite)
        self.order = {bench.name: index for index, bench in enumerate(matrix)}
        self.took = {}      # benchmark index -> seconds its last task took
        # Benchmarks whose row ended when a batch was lost outside the run
        # (``Model.outside``): name -> why.
        self.lost = {}
        # workload -> seconds per pair of its runs paired in the worker
        self.pairs_s = {}
        self.start = progress.start
        preset = (runner.args.values, runner.args.warmups)
        # The first round: a worker paired in its worker runs no warm-up
        # (its first pair tells whether one is needed, and its median
        # hardly feels it), one paired by round the preset's.
        self.default = {True: (preset[0], preset[1] if args.fixed_warmups else 0),
                        False: (args.round_values or preset[0], preset[1])}
        self.allocation = Allocation(Plan(args.max_time, args.precision),
                                     runner.args.values if args.fixed_values else None,
                                     runner.args.warmups if args.fixed_warmups else None)

    def took_by_name(self):
        return {self.matrix[index].name: seconds for index, seconds in self.took.items()}

    def rounds_done(self):
        return next_round(self.results.suite) - self.first if self.results.suite else 0

    def read(self, fixed_left=0):
        """Read the file between rounds: the questions answered so far, and
        each benchmark's next worker (``fixed_left``: the preset's rounds
        still to run, this one included)."""
        self.allocation.read(self.results.suite, self.took_by_name(), self.rounds_done(),
                             time.monotonic() - self.start, fixed_left)

    def sizes(self, bench):
        """(values, warm-ups) of ``bench``'s next worker: what the run
        measured of it decides (``concbench.run.calibration``), else the
        preset's (values for a worker paired with the reference, one value
        otherwise); -n and -w win."""
        values, warmups = self.default[bench.partner is not None]
        if self.args.fixed_values:
            values = self.runner.args.values
        elif bench.partner is not None:
            seen = self.pairs_s.get(bench.workload.name)
            values = calibration.first_values(
                values, statistics.median(seen) if seen else None)
        if bench.workload.name == ceiling.LABEL and not self.args.fixed_values:
            values = ceiling.VALUES
        sized = self.allocation.sizes.get(bench.name)
        if sized is not None:
            values, warmups = sized.values, sized.warmups
        return values, warmups

    def run(self, round_number, index, last):
        stop_if_signalled()
        bench = self.matrix[index]
        name = task_name(bench.name, round_number)
        saved = self.runner.args.values, self.runner.args.warmups
        self.runner.args.values, self.runner.args.warmups = self.sizes(bench)
        if bench.name in self.lost:
            pass_over(self.runner)
            return
        started = time.monotonic()
        try:
            result = run_task(self.runner, bench, name, None, self.results)
        except TaskFailed as exc:
            if not bench.model.outside:
                raise
            # Its cluster, not the run, failed: this row ends, the rest go on.
            pass_over(self.runner)
            self.lost[bench.name] = str(exc)
            say("%s: %s: its batch was lost outside the run (the line above); its row "
                "ends here; the other rows go on" % (console.PROG, bench.name))
            return
        finally:
            self.runner.args.values, self.runner.args.warmups = saved
        self.took[index] = time.monotonic() - started
        if result is None:
            return
        if result.get_name() != name:
            raise TaskFailed("a worker ran %s where %s was due: its schedule differs "
                             "from the master's" % (result.get_name(), name))
        run = filed(result, bench.name, round_number if round_number is None
                    else self.first + round_number)
        seconds = costs.pair_seconds(run.get_runs()[0])
        if seconds is not None:
            self.pairs_s.setdefault(bench.workload.name, []).append(seconds)
        self.results.add(run, self.order)
        stop_if_signalled()
        if bench.name not in self.warned and self.gil_check(run):
            self.warned.add(bench.name)
        self.progress.task_done(run, last)

    def beside_indexes(self, name):
        """(the rival's index, the leader's) in the matrix when ``name`` is
        a race's comparison side by side of two of this run's benchmarks
        (``schema.beside_name``), else None."""
        found = beside_of(name)
        if found is None or found[0] not in self.order:
            return None
        rival = self.order[found[0]]
        other = self.order.get("%s/%s" % (self.matrix[rival].workload.label, found[1]))
        return None if other is None else (rival, other)

    def can_add(self, name):
        return self.beside_indexes(name) is not None

    def add_beside(self, name):
        """Add the benchmark ``name`` (``can_add``) to the matrix: at its
        end, where every worker started from now on appends it too
        (--side-by-side), so that positions before it stay as they were."""
        rival, other = self.beside_indexes(name)
        self.matrix.append(beside_bench(self.matrix[rival], self.matrix[other]))
        self.order[name] = len(self.matrix) - 1
        self.args.side_by_side = self.runner.args.side_by_side = ",".join(
            filter(None, [self.args.side_by_side, "%d:%d" % (rival, other)]))

    def add_round(self, indexes, extra):
        """Run one added round of the benchmarks ``indexes``; ``extra``: every
        added round so far, this one included, which workers started from
        now on must register too."""
        from concbench.run.schedule import format_extra, round_tasks

        self.args.extra_rounds = self.runner.args.extra_rounds = format_extra(extra)
        rounds = self.args.rounds + len(extra) - 1
        for _, index in round_tasks(indexes, self.args.order_seed, rounds):
            self.run(rounds, index, False)

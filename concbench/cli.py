"""bench.py: the matrix of workloads x models under one pyperf Runner.

The master process checks everything it can before the first benchmark
(options, output file, descriptors, servers), starts what stands in for a
server the user did not name, then lets pyperf run each benchmark in its
worker processes. Each worker re-executes bench.py, builds the same matrix,
and prepares only the benchmark pyperf selected for it.
"""

import contextlib
import io
import os
import random
import signal
import sys
import time

import pyperf

from concbench import gil, schema
from concbench.adaptive import Plan
from concbench.batches import time_batches
from concbench.cleanup import (Stopped, adopt_orphans, exit_on_signals, on_exit,
                               stop_descendants, stop_if_signalled)
from concbench.figures import HOOK_NAME
from concbench.lifeline import follow
from concbench.matrix import MatrixError, build_matrix, library_versions
from concbench.options import (add_options, forward_options, preset_from_argv,
                                workload_module_from_argv)
from concbench.plugins import PluginError, add_workload_module
from concbench.presets import PRECISION_BUDGET, PRESETS
from concbench.progress import Progress, say, unstable_summary
from concbench.schedule import (add_rounds, filed, format_extra, next_round,
                                parse_extra, round_tasks, schedule, task_name)
from concbench.results import OutputError, ResultsFile, check_output, move_earlier
from concbench.servers import raise_nofile_limit

PROG = "bench.py"


def fail(message, status=2):
    print("%s: error: %s" % (PROG, message), file=sys.stderr)
    sys.exit(status)


def make_runner(program_args=None):
    """``program_args``: how pyperf's workers run this program (None: the
    script itself, sys.argv[0])."""
    preset = preset_from_argv(sys.argv[1:])
    runner = pyperf.Runner(loops=1, add_cmdline_args=forward_options,
                           program_args=program_args, **preset["runner"])
    runner.argparser.prog = PROG
    runner.argparser.error = fail
    try:
        module = workload_module_from_argv(sys.argv[1:])
        if module:
            add_workload_module(module)
        add_options(runner.argparser)
    except PluginError as exc:
        fail(str(exc))
    except RuntimeError as exc:     # two workloads declare one option differently
        fail(str(exc))
    return runner


def argument_parser(prog="bench.py"):
    """bench.py's whole parser, pyperf's options with ours: what --help
    prints, and what the documentation's option reference is made from."""
    runner = make_runner()
    runner.argparser.prog = prog
    return runner.argparser


def matrix_or_fail(args, left_out=None):
    try:
        return build_matrix(args, left_out)
    except MatrixError as exc:
        fail(str(exc))


# -- checks in the master, before any benchmark ------------------------------

def check_descriptors(matrix, hard_limit):
    """Say before starting when a model needs more sockets than allowed."""
    if hard_limit is None:
        return
    for bench in matrix:
        connections = bench.in_flight() * bench.workload.sockets_per_item
        if connections and connections + 64 > hard_limit:
            fail("%s keeps up to %d connections open, but the hard limit on open "
                 "files is %d; raise it (ulimit -Hn, or limits.conf) or lower the "
                 "concurrency" % (bench.name, connections, hard_limit))


def preflight(matrix):
    """Each workload checks its server before any benchmark starts."""
    by_workload = {}
    for bench in matrix:
        by_workload.setdefault(bench.workload, {})[bench.name] = bench.in_flight()
    for workload, counts in by_workload.items():
        try:
            workload.preflight(counts)
        except ValueError as exc:
            fail(str(exc))


def open_results(args, matrix, hard_limit):
    """Every check that can fail before a benchmark runs; then the output
    (in memory only without -o or --append)."""
    try:
        results = ResultsFile(args.output or args.append, append=bool(args.append))
        check_descriptors(matrix, hard_limit)
        preflight(matrix)
        if args.output and args.keep_earlier:
            moved = move_earlier(args.output)
            if moved:
                print("%s: moved the earlier %s to %s"
                      % (PROG, args.output, os.path.relpath(moved)),
                      file=sys.stderr, flush=True)
    except OutputError as exc:
        fail(str(exc))
    return results


def provide_services(args, matrix):
    """Start what stands in for parameters the user left empty (the local
    load server for --server-url); return {param: value} for the workers."""
    provided = {}
    for workload in dict.fromkeys(bench.workload for bench in matrix):
        if not workload.needs_providing():
            continue
        try:
            provided.update(workload.provide())
        except RuntimeError as exc:     # a server that does not start
            fail(str(exc), status=1)
        except ValueError as exc:       # a server that cannot be used
            fail(str(exc))
    return provided


# -- metadata of the whole run ------------------------------------------------

def force_gil(args):
    """--gil on|off: the workers' PYTHON_GIL (pyperf passes it on)."""
    if args.force_gil is None:
        return
    if not gil.free_threaded_build():
        fail("--gil %s needs a free-threaded build (python3.13t or later); this "
             "Python has the GIL always" % args.force_gil)
    os.environ["PYTHON_GIL"] = "1" if args.force_gil == "on" else "0"


def expected_gil(args):
    """Whether the workers should run with the GIL."""
    if not gil.free_threaded_build() or args.force_gil == "on":
        return True
    return args.force_gil != "off" and os.environ.get("PYTHON_GIL") == "1"


def warn_gil(bench, expected):
    """A worker whose GIL state was not the one asked for, once per benchmark."""
    for run in bench.get_runs():
        meta = run.get_metadata()
        if meta.get(schema.GIL_ENABLED, "yes" if expected else "no") != (
                "yes" if expected else "no"):
            by = meta.get(schema.GIL_ENABLED_BY)
            say("WARNING: %s: the GIL was %s in its worker%s; its figures are "
                "not those of the build asked for (flagged in the report)" % (
                    bench.get_name(), "enabled" if meta[schema.GIL_ENABLED] == "yes"
                    else "disabled", " (re-enabled by importing %s)" % by if by else ""))
            return True
    return False


def suite_metadata(args):
    import sysconfig

    preset_name = args.preset
    meta = {schema.PRESET: preset_name,
            schema.ORDER: "pyperf" if args.pyperf_order else "interleaved",
            schema.ORDER_SEED: args.order_seed}
    preset = PRESETS[preset_name]
    if preset.get("about"):
        meta[schema.SCENARIO] = preset["about"]
    if preset.get("scaled"):
        meta[schema.SCENARIO_SCALED] = preset["scaled"]
    # Resolved by the master (plan_rounds) and passed on to the workers.
    if args.max_time:
        meta[schema.MAX_TIME_S] = args.max_time
    if args.precision:
        meta[schema.PRECISION_TARGET_PCT] = args.precision
    if args.force_gil:
        meta[schema.GIL_FORCED] = args.force_gil
    meta[schema.GIL_EXPECTED] = "yes" if expected_gil(args) else "no"
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    meta[schema.GIL] = "enabled" if is_gil_enabled is None or is_gil_enabled() \
        else "disabled"
    meta[schema.FREE_THREADED_BUILD] = \
        "yes" if sysconfig.get_config_var("Py_GIL_DISABLED") else "no"
    meta.update(library_versions(("pyperf", "Pillow", "uvloop", "psutil")))
    return meta


def enable_run_figures(args):
    """Per-run figures (concbench.figures) are on by default, through
    pyperf's hook, which the package installs as an entry point."""
    import importlib.metadata

    if HOOK_NAME in (args.hook or []):
        return
    installed = {entry.name for entry in
                 importlib.metadata.entry_points(group="pyperf.hook")}
    if HOOK_NAME in installed:
        args.hook = list(args.hook or []) + [HOOK_NAME]
    elif not args.worker:
        print("WARNING: the concbench pyperf hook is not installed (pip "
              "install -e .), so runs carry no per-run figures", file=sys.stderr)


# -- running -------------------------------------------------------------------

def runs_here(args, index):
    """Whether this process times benchmark ``index``: a worker runs the one
    pyperf selected (or all, without --worker-task); the master none."""
    return args.worker and args.worker_task in (None, index)


def given(argv, short, long):
    """Whether pyperf's option ``short``/``long`` is on the command line."""
    return any(arg in (short, long) or arg.startswith(long + "=")
               or (arg.startswith(short) and arg[2:].isdigit()) for arg in argv)


def processes_given(argv):
    """Whether -p/--processes is on the command line (a fixed count)."""
    return given(argv, "-p", "--processes")


def adaptive_plan(args):
    """Adaptive rounds: asked for (--max-time, --precision), or the
    preset's budget unless -p gave a fixed count; never in pyperf's order."""
    if args.pyperf_order:
        return Plan()
    budget = args.max_time
    if budget is None and (args.precision or not args.fixed_rounds):
        budget = PRESETS[args.preset].get("max_time")
    if budget is None and args.precision:
        budget = PRECISION_BUDGET
    return Plan(budget, args.precision)


def check_plan(args):
    if args.pyperf_order and (args.precision or args.max_time):
        fail("--%s adds rounds to interleaved runs; it cannot be used with "
             "--pyperf-order" % ("precision" if args.precision else "max-time"))


def plan_rounds(runner, args):
    """-p N means N rounds of one worker per benchmark (unless
    --pyperf-order); the order seed is drawn once, in the master."""
    if args.worker:
        # A worker started by hand (pyperf --worker) runs one round.
        args.rounds = args.rounds or 1
        args.order_seed = args.order_seed or 0
        return
    if args.order_seed is None:
        args.order_seed = random.SystemRandom().randrange(2 ** 32)
    args.rounds = runner.args.processes
    if not args.pyperf_order:
        runner.args.processes = 1
    plan = adaptive_plan(args)
    args.max_time = plan.max_time
    # Workers receive them through forward_options.
    runner.args.order_seed, runner.args.rounds = args.order_seed, args.rounds
    runner.args.max_time = args.max_time
    # Values per worker of the benchmarks not paired in their worker (a
    # round's unit there is the run's median; -n sets every count).
    if not given(sys.argv[1:], "-n", "--values"):
        args.round_values = runner.args.round_values = \
            PRESETS[args.preset].get("round_values")


def run_matrix(runner, args, matrix, results):
    extra = parse_extra(args.extra_rounds)
    tasks = schedule(len(matrix), args.rounds, args.order_seed,
                     interleave=not args.pyperf_order, extra=extra)
    if args.worker:
        # pyperf runs the task at this worker's position; the others are
        # registered only to count positions.
        for position, (round_number, index) in enumerate(tasks):
            bench = matrix[index]
            metadata = None
            if runs_here(runner.args, position):
                bench.round = round_number
                if bench.partner is None and args.round_values:
                    runner.args.values = args.round_values
                metadata = bench.metadata()
            run_task(runner, bench, task_name(bench.name, round_number),
                     metadata, results)
        return
    plan = Plan(args.max_time, args.precision)
    progress = Progress(len(tasks), len(matrix))
    say("%s: %d benchmarks x %d %s (order seed %d)%s%s" % (
        PROG, len(matrix), args.rounds,
        "processes each, pyperf's order" if args.pyperf_order
        else "interleaved rounds", args.order_seed,
        ", " + plan.describe() if plan.adaptive else "",
        "" if runner.args.verbose else "; -v shows pyperf's output"))
    master = Master(runner, args, matrix, results, progress)
    last_task = {index: position for position, (_, index) in enumerate(tasks)}
    for position, (round_number, index) in enumerate(tasks):
        if round_number is not None and position % len(matrix) == 0:
            progress.round_starts(round_number, args.rounds)
        master.run(round_number, index, last_task[index] == position)
    if plan.adaptive:
        add_rounds(master, plan)
    summary = unstable_summary(results.suite)
    if summary:
        say(summary)
    for line in control_summary(results.suite):
        say(line)


def control_summary(suite):
    """What the A/A controls say of the run, as the report's header says it."""
    from concbench.report.environment import control_lines
    from concbench.report.rows import build_rows

    if suite is None:
        return []
    controls = {}
    return control_lines(build_rows(suite, controls), controls)


class Master:
    """The master's side of running tasks: files each run and keeps the
    time each benchmark's worker took (``concbench.schedule.add_rounds``
    decides which run in added rounds)."""

    def __init__(self, runner, args, matrix, results, progress):
        self.runner, self.args, self.matrix = runner, args, matrix
        self.results, self.progress = results, progress
        self.first = next_round(results.suite)
        self.order = {bench.name: index for index, bench in enumerate(matrix)}
        self.expected, self.warned = expected_gil(args), set()
        self.took = {}      # benchmark index -> seconds its last task took
        self.start = progress.start

    def run(self, round_number, index, last):
        stop_if_signalled()
        bench = self.matrix[index]
        name = task_name(bench.name, round_number)
        started = time.monotonic()
        result = run_task(self.runner, bench, name, None, self.results)
        self.took[index] = time.monotonic() - started
        if result is None:
            return
        if result.get_name() != name:
            fail("a worker ran %s where %s was due: its schedule differs from "
                 "the master's" % (result.get_name(), name), status=1)
        run = filed(result, bench.name, round_number if round_number is None
                    else self.first + round_number)
        self.results.add(run, self.order)
        stop_if_signalled()
        if bench.name not in self.warned and warn_gil(run, self.expected):
            self.warned.add(bench.name)
        self.progress.task_done(run, last)

    def add_round(self, indexes, extra):
        """Run one added round of the benchmarks ``indexes``; ``extra``: every
        added round so far, this one included, which workers started from
        now on must register too."""
        self.args.extra_rounds = self.runner.args.extra_rounds = format_extra(extra)
        rounds = self.args.rounds + len(extra) - 1
        for _, index in round_tasks(indexes, self.args.order_seed, rounds):
            self.run(rounds, index, False)


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
        fail("benchmark %s failed (%s)%s" % (bench.name, exc,
                                              kept_note(results)),
             status=1)


def kept_note(results):
    """Where the runs of the benchmarks completed so far are kept, if any."""
    if not results or not results.path or not results.saved:
        return ""
    return "; the runs of %d benchmark(s) completed before it are in %s" % (
        results.saved, results.path)


def main(prog="bench.py", program_args=None):
    global PROG
    PROG = prog
    opened = []     # the results file, once it is open
    try:
        run_bench(program_args, opened)
    except (KeyboardInterrupt, Stopped) as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        if "--worker" not in sys.argv:      # the master speaks for its workers
            print("%s: stopped by %s%s" % (PROG, signal.Signals(signum).name,
                                           kept_note(opened[0] if opened else None)),
                  file=sys.stderr, flush=True)
        sys.exit(128 + signum)


def run_bench(program_args, opened):
    runner = make_runner(program_args)
    args = runner.argparser.parse_args()
    if args.worker:
        # A worker ends with the master that started it, however it ends.
        follow(args.master_pid)
    args.fixed_rounds = processes_given(sys.argv[1:])
    hard_limit = raise_nofile_limit()
    force_gil(args)
    check_plan(args)
    if not args.worker:
        try:
            check_output(args)
        except OutputError as exc:
            fail(str(exc))
    left_out = []
    matrix = matrix_or_fail(args, left_out)
    if args.list:
        for bench in matrix:
            print(bench.name)
        for line in left_out:
            print("# " + line, file=sys.stderr)
        return
    if not matrix:
        fail("the selection is empty%s" % "".join("; " + line for line in left_out))

    results = None if args.worker else open_results(args, matrix, hard_limit)
    opened.append(results)
    if not args.worker:     # every check passed: say what will not run
        for line in left_out:
            say("%s: %s" % (PROG, line))
    runner.parse_args()
    plan_rounds(runner, args)
    if not args.no_run_figures:
        enable_run_figures(runner.args)
    if not args.worker:
        runner.args.master_pid = os.getpid()    # for the workers it starts
        adopt_orphans()
        exit_on_signals()
        on_exit(stop_descendants)
        # Written by ResultsFile, not by pyperf.
        runner.args.output = runner.args.append = None
        provided = provide_services(args, matrix)
        if provided:
            # Workers receive the values through forward_options.
            for param, value in provided.items():
                setattr(args, param, value)
                setattr(runner.args, param, value)
            matrix = matrix_or_fail(args)
    runner.metadata.update(suite_metadata(args))
    scaled = PRESETS[args.preset].get("scaled")
    if scaled and not args.worker:
        print("%s: scaled down on purpose: %s" % (args.preset, scaled),
              file=sys.stderr, flush=True)
    run_matrix(runner, args, matrix, results)

"""bench.py: the matrix of workloads x models under one pyperf Runner.

The master process checks everything it can before the first benchmark
(options, output file, descriptors, servers), starts what stands in for a
server the user did not name, then lets pyperf run each benchmark in its
worker processes. Each worker re-executes bench.py, builds the same matrix,
and prepares only the benchmark pyperf selected for it.
"""

import os
import random
import signal
import sys

import pyperf

from concbench import gil, inputs, schema
from concbench.allocation import Plan
from concbench.cleanup import (Stopped, adopt_orphans, exit_on_signals, on_exit,
                               stop_descendants)
from concbench.figures import HOOK_NAME
from concbench.lifeline import follow
from concbench.master import TaskFailed, kept_note, run_matrix
from concbench.matrix import MatrixError, build_matrix, library_versions
from concbench.options import (add_options, forward_options, preset_from_argv,
                                workload_module_from_argv)
from concbench.plugins import PluginError, add_workload_module
from concbench.presets import PRECISION_BUDGET, PRESETS
from concbench.progress import say
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
    # round's unit there is the run's median; -n sets every count), until
    # the run's own figures size each worker (concbench.calibration).
    args.fixed_values = given(sys.argv[1:], "-n", "--values")
    args.fixed_warmups = given(sys.argv[1:], "-w", "--warmups")
    args.round_values = None if args.fixed_values else \
        PRESETS[args.preset].get("round_values")


def main(prog="bench.py", program_args=None):
    global PROG
    PROG = prog
    opened = []     # the results file, once it is open
    try:
        run_bench(program_args, opened)
    except TaskFailed as exc:
        fail(str(exc), status=exc.status)
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
        args.inputs_folder = runner.args.inputs_folder = inputs.make_folder()
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
    expected = expected_gil(args)
    run_matrix(runner, args, matrix, results, lambda run: warn_gil(run, expected))

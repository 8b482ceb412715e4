"""bench.py: the matrix of workloads x models under one pyperf Runner.

The master process checks everything it can before the first benchmark
(options, output file, descriptors, servers), starts what stands in for a
server the user did not name, then lets pyperf run each benchmark in its
worker processes. Each worker re-executes bench.py, builds the same matrix,
and prepares only the benchmark pyperf selected for it.
"""

import atexit
import os
import signal
import sys

import pyperf

from concbench import cpus, ladder
from concbench.plugins import PluginError, add_workload_module
from concbench.run import ceiling, interventions, inputs, progress
from concbench.run.checks import open_results, preflight, provide_services
from concbench.run.cleanup import (Stopped, adopt_orphans, exit_on_signals, on_exit,
                                   stop_descendants)
from concbench.run.lifeline import follow
from concbench.run.matrix import MatrixError, build_matrix, checked_families
from concbench.run.options import (WORKLOAD_DEST, add_options, forward_options,
                                   preset_from_argv, workload_module_from_argv)
from concbench.run.plan import check_plan, check_precision, plan_rounds, processes_given
from concbench.run.presets import PRESETS
from concbench.run.progress import fail, say
from concbench.run.results import OutputError, check_output
from concbench.run.suite import (enable_run_figures, expected_gil, force_gil, suite_metadata,
                                 warn_gil)
from concbench.run.tasks import TaskFailed, kept_note, run_worker
from concbench.servers import raise_nofile_limit


def make_runner(program_args=None):
    """``program_args``: how pyperf's workers run this program (None: the
    script itself, sys.argv[0])."""
    preset = preset_from_argv(sys.argv[1:])
    runner = pyperf.Runner(loops=1, add_cmdline_args=forward_options,
                           program_args=program_args, **preset["runner"])
    runner.argparser.prog = progress.PROG
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


def main(prog="bench.py", program_args=None):
    progress.PROG = prog
    opened = []     # the results file, once it is open
    worker = "--worker" in sys.argv
    if worker:
        # Registered before anything else, so that it runs after every other
        # exit handler (the model's, the sampler's, multiprocessing's).
        atexit.register(skip_teardown)
    try:
        run_bench(program_args, opened)
        if worker:
            _worker_done.append(True)
    except TaskFailed as exc:
        fail(str(exc), status=exc.status)
    except (KeyboardInterrupt, Stopped, Exception) as exc:
        stop = stopping(exc)
        if stop is None:
            raise
        signum = getattr(stop, "signum", signal.SIGINT)
        if not worker:      # the master speaks for its workers
            print("%s: stopped by %s%s" % (progress.PROG, signal.Signals(signum).name,
                                           kept_note(opened[0] if opened else None)),
                  file=sys.stderr, flush=True)
        sys.exit(128 + signum)


# Whether this worker's benchmark has finished: process state, for its exit.
_worker_done = []


def skip_teardown():
    """A worker that wrote its run ends here, without the interpreter's
    teardown (freeing every module and object), which would delay the next
    benchmark's worker, hundreds of times a run (measured in bced984: git
    show bced984). Its results are in the master's hands, and every other
    exit handler has run; a worker that failed ends as Python ends it, with
    its status."""
    if _worker_done:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # closed, or its reader gone
                pass
        os._exit(0)


def stopping(exc):
    """The signal's exception (KeyboardInterrupt or Stopped) that ``exc``
    is, or that was being handled when ``exc`` was raised; else None. A
    signal can land where unwinding raises again (pyperf closing a worker's
    pipe: OSError, EBADF); the run still ends as that signal's stop, not
    with a traceback and no word of the signal (a7718d9: git show a7718d9)."""
    while exc is not None:
        if isinstance(exc, (KeyboardInterrupt, Stopped)):
            return exc
        exc = exc.__context__
    return None


def run_bench(program_args, opened):
    runner = make_runner(program_args)
    args = runner.argparser.parse_args()
    if args.worker:
        # A worker ends with the master that started it, however it ends.
        follow(args.master_pid)
    interventions.leave_out(args.without)
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
    if not args.worker:
        # The machine's CPUs, read before any worker is pinned; the workers
        # receive this reading (--usable-cpus) and size their matrix alike.
        machine = cpus.detect()
        args.usable_cpus = cpus.encode(machine)
        if args.cpus and args.cpus > machine.usable:
            say("%s: --cpus %d: worker counts sized for %d CPUs; this machine's "
                "usable CPUs: %d" % (progress.PROG, args.cpus, args.cpus, machine.usable))
    matrix = matrix_or_fail(args, left_out)
    if not args.worker:
        # Each family's own check (a library, a cluster), once; the rows it
        # leaves out are left out in every worker too.
        try:
            args.left_out_models = checked_families(args, matrix) or None
        except MatrixError as exc:
            fail(str(exc))
        if args.left_out_models:
            left_out.clear()
            matrix = matrix_or_fail(args, left_out)
    if args.list:
        for bench in matrix:
            print(bench.name)
        print("# " + ladder.describe(args), file=sys.stderr)
        if any(bench.workload.name == ceiling.LABEL for bench in matrix):
            print("# " + ceiling.LIST_NOTE, file=sys.stderr)
        for line in left_out:
            print("# " + line, file=sys.stderr)
        return
    if not matrix:
        fail("the selection is empty%s" % "".join("; " + line for line in left_out))
    check_precision(args, matrix)

    results = None if args.worker else open_results(args, matrix, hard_limit)
    opened.append(results)
    if not args.worker:     # every check passed: say what will not run
        for line in left_out:
            say("%s: %s" % (progress.PROG, line))
    runner.parse_args()
    plan_rounds(runner, args)
    if not args.no_run_figures:
        enable_run_figures(runner.args)
    if not args.worker:
        runner.args.master_pid = os.getpid()    # for the workers it starts
        runner.args.usable_cpus = args.usable_cpus
        # What the master's checks found (``checked_families``).
        runner.args.left_out_models = args.left_out_models
        runner.args.dask_cluster = getattr(args, "dask_cluster", None)
        args.inputs_folder = runner.args.inputs_folder = inputs.make_folder()
        adopt_orphans()
        exit_on_signals()
        on_exit(stop_descendants)
        # Written by ResultsFile, not by pyperf.
        runner.args.output = runner.args.append = None
        provided, unavailable = provide_services(args, matrix)
        if unavailable:
            # The rest runs: the workers' selection leaves them out too.
            kept = [name for name in dict.fromkeys(b.workload.name for b in matrix)
                    if name not in unavailable]
            if not kept:
                fail("the selection is empty: %s could not run here"
                     % ", ".join(unavailable))
            provided[WORKLOAD_DEST] = ",".join(kept)
        if provided:
            # Workers receive the values through forward_options.
            for param, value in provided.items():
                setattr(args, param, value)
                setattr(runner.args, param, value)
            matrix = matrix_or_fail(args)
            # What was started for them (the embedded database: its
            # connections) is checked as a user's server is.
            preflight([b for b in matrix if set(b.workload.PROVIDED) & set(provided)])
    runner.metadata.update(suite_metadata(args))
    scaled = PRESETS[args.preset].get("scaled")
    if scaled and not args.worker:
        print("%s: scaled down on purpose: %s" % (args.preset, scaled),
              file=sys.stderr, flush=True)
    if args.worker:
        run_worker(runner, args, matrix, results)
        return
    # The master's loop, imported by the master alone: a worker does not
    # pay for the allocation and the statistics (concbench.run.tasks).
    from concbench.run.master import run_matrix

    expected = expected_gil(args)
    lost = run_matrix(runner, args, matrix, results, lambda run: warn_gil(run, expected))
    if lost:
        # The other rows ran and are in the file; the status says not all did.
        fail("%d row(s) ended early, their batches lost outside the run: %s; the other "
             "rows ran%s" % (len(lost), ", ".join(sorted(lost)),
                             " and are in %s" % results.path if results.path else ""),
             status=1)

"""The plan of a run's rounds: -p N fixed rounds, or rounds added while
questions stay open within a budget (--max-time, --precision, the
preset's); resolved once, in the master, and passed on to the workers."""

import random
import sys

from concbench.run.presets import PRECISION_BUDGET, PRESETS
from concbench.run.progress import fail, format_duration


class Plan:
    """Whether this run adds rounds, and within what budget."""

    def __init__(self, max_time=None, precision=None):
        self.max_time = max_time
        self.precision = precision

    @property
    def adaptive(self):
        return self.max_time is not None

    def describe(self):
        target = ("every speedup decided and within +-%g%%" % self.precision
                  if self.precision else "every question answered")
        return "then rounds until %s, within %s in all" % (
            target, format_duration(self.max_time))


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


def check_precision(args, matrix):
    """--precision asks of speedups: a workload run without its reference
    has times, but none to decide."""
    if not args.precision:
        return
    have = {bench.workload.label for bench in matrix if bench.model.name == bench.reference}
    missing = [label for label in dict.fromkeys(bench.workload.label for bench in matrix)
               if label not in have]
    if missing:
        fail("--precision: no speedup to decide in %s: the reference %s is not among "
             "--model; add it, or name one with --reference"
             % (", ".join(missing), matrix[0].reference))


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
    # the run's own figures size each worker (concbench.run.calibration).
    args.fixed_values = given(sys.argv[1:], "-n", "--values")
    args.fixed_warmups = given(sys.argv[1:], "-w", "--warmups")
    args.round_values = None if args.fixed_values else \
        PRESETS[args.preset].get("round_values")

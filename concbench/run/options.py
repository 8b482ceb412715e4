"""bench.py's own options: the selection, and every workload's parameters.

The workload options are not listed here: each workload declares its own
(``Workload.OPTIONS``), and this module gathers them, so that a new workload
brings its options with it. An option several workloads share (``--items``)
must be declared alike by all of them, defaults aside.
"""

import argparse
import re

from concbench import workloads
from concbench.rules import LEVEL_TEXT
from concbench.run import interventions
from concbench.run.presets import DEFAULT_PRESET, PRESETS, SCENARIOS
from concbench.run.schedule import PAIRINGS

# Options of ours, besides the workloads', that workers must receive too:
# the selection, and the schedule (a worker finds its task by position).
# --workload's destination: a run whose embedded server cannot start
# narrows it for its workers (concbench/run/cli.py).
WORKLOAD_DEST = "workload"
SELECTION = ("preset", "workload", "model", "reference", "no_control", "no_run_figures",
             "without", "pairing", "latency_overhead", "no_latency", "pyperf_order",
             "order_seed", "rounds", "extra_rounds", "side_by_side",
             "max_time", "precision", "force_gil", "workload_module", "inputs_folder",
             "master_pid", "cpus", "usable_cpus", "ceiling", "no_ceiling", "dask_address",
             "left_out_models", "dask_cluster")


# Our options whose flag is not their name.
OWN_FLAGS = {"force_gil": "--gil", "dask_address": "--dask-scheduler"}


def workload_options():
    """Every registered workload's options, one per parameter, in registry
    order of first appearance."""
    found = {}
    for cls in workloads.classes():
        for option in cls.OPTIONS:
            known = found.get(option.param)
            if known is None:
                found[option.param] = option
            elif known.spec() != option.spec():
                raise RuntimeError("workloads declare %s differently (%s)"
                                   % (option.flag, cls.name))
    return list(found.values())


def add_options(parser):
    group = parser.add_argument_group("concurrency benchmark")
    group.add_argument("--preset", default=DEFAULT_PRESET, choices=sorted(PRESETS),
                       metavar="NAME",
                       help="sizes and model lists: quick, default, wide (the "
                       "default's sizes with every variant, 20 minutes), full, or a "
                       "seed's scenario (%s) (default: %%(default)s)"
                       % ", ".join(SCENARIOS))
    group.add_argument("--workload", metavar="NAME[,NAME...]",
                       help="run only these workloads (%s)"
                       % ", ".join(workloads.names()))
    group.add_argument("--workload-module", metavar="FILE.py|MODULE",
                       help="add the workloads this module defines (a Workload "
                       "subclass, or a function decorated with "
                       "concbench.workloads.simple.workload), without packaging it")
    group.add_argument("--model", metavar="PATTERN[,PATTERN...]",
                       help="run only the preset's models matching these glob "
                       "patterns; a plain model name (threads-64) is run even "
                       "if the preset lacks it")
    group.add_argument("--reference", metavar="MODEL",
                       help="the model every speedup is measured against, and "
                       "that the A/A control runs against itself: the baseline "
                       "you run today (threads-8: what would asyncio give?); "
                       "it runs whatever --model selects; batches are still "
                       "checked against sequential results (default: sequential)")
    group.add_argument("--no-control", action="store_true",
                       help="leave out the A/A control (<workload>/control: the "
                       "reference run again, whose verdict checks the "
                       "intervals); added whenever the reference runs, "
                       "but in a scenario")
    group.add_argument("--cpus", type=cpu_count, metavar="N",
                       help="size the worker counts (the ladder 1, 2, 4, ..., N, 2N) "
                       "and the standard library's defaults as for a machine of N "
                       "usable CPUs, to plan for another machine (default: the CPUs "
                       "this run may use: its affinity set, capped by a cgroup quota)")
    group.add_argument("--dask-scheduler", dest="dask_address", type=dask_scheduler,
                       metavar="ADDRESS",
                       help="run the dask-cluster-chunk-C rows on this existing Dask "
                       "cluster (tcp://HOST:PORT or tls://HOST:PORT), its workers as "
                       "they are; the run starts and stops nothing there, and gives "
                       "up connecting after 10 s")
    # The master's reading of the machine's CPUs (concbench.cpus.encode),
    # for the workers, whose affinity pinning may have narrowed.
    group.add_argument("--usable-cpus", help=argparse.SUPPRESS)
    # The models the master's checks left out (Model.check_run), for the
    # workers: "PATTERN=why" lines.
    group.add_argument("--left-out-models", help=argparse.SUPPRESS)
    # The user's Dask cluster as the master found it: "WORKERS,THREADS".
    group.add_argument("--dask-cluster", help=argparse.SUPPRESS)
    ceiling = group.add_mutually_exclusive_group()
    ceiling.add_argument("--ceiling", action="store_true",
                         help="measure the machine's own ceiling (N copies of one "
                         "fixed piece of work at once, at each worker count of the "
                         "ladder) even where --model narrows the selection or the "
                         "preset does not (on by default in the default, wide and "
                         "full presets)")
    ceiling.add_argument("--no-ceiling", action="store_true",
                         help="leave the machine's ceiling out")
    group.add_argument("--list", action="store_true",
                       help="print the benchmarks that would run, and exit")
    group.add_argument("--keep-earlier", action="store_true",
                       help="if the -o file exists, move it to earlier/ beside "
                       "it (and say so) instead of refusing")
    group.add_argument("--order-seed", type=seed, metavar="N",
                       help="seed of the order of the benchmarks in each round "
                       "(default: a new one, recorded in the metadata)")
    group.add_argument("--pyperf-order", action="store_true",
                       help="run all processes of a benchmark, then the next "
                       "(pyperf's order), instead of interleaved rounds")
    group.add_argument("--pairing", choices=PAIRINGS, default="auto",
                       help="how a speedup pairs a model's batches with the "
                       "reference's: worker (its worker runs the reference's "
                       "batches alternating with its own), round (its run "
                       "with the reference's run of the same round), or auto "
                       "(default: worker for CPU workloads, round for IO)")
    group.add_argument("--no-latency", action="store_true",
                       help="leave each item's latency unrecorded (recording "
                       "reads the clock once or twice per item, about 60 ns "
                       "each; --latency-overhead measures what it costs)")
    group.add_argument("--latency-overhead", action="store_true",
                       help="measure what recording each item's latency costs: "
                       "every model's worker runs the same model unrecorded "
                       "beside it, alternating in its own process, and its "
                       "speedup is unrecorded time / recorded time")
    group.add_argument("--gil", dest="force_gil", choices=("on", "off"),
                       help="free-threaded builds: run the workers with the "
                       "GIL forced on or off (PYTHON_GIL)")
    group.add_argument("--max-time", type=duration, metavar="DURATION",
                       help="after the preset's rounds, add rounds for the "
                       "benchmarks whose speedup is still undecided, until "
                       "the whole run has taken this long (90s, 10m, 1h; "
                       "default: the preset's budget, none with -p N)")
    group.add_argument("--precision", type=percentage, metavar="PCT",
                       help="add rounds until every speedup is decided and its "
                       "%s interval within +-PCT percent (within --max-time)"
                       % LEVEL_TEXT.replace("%", "%%"))
    # The master's -p and the rounds it added, for the workers (pyperf does
    # not pass them on).
    group.add_argument("--rounds", type=int, help=argparse.SUPPRESS)
    group.add_argument("--extra-rounds", help=argparse.SUPPRESS)
    # The races' comparisons side by side the master added: "rival:leader"
    # indexes into the matrix, comma-separated (concbench.run.matrix.beside).
    group.add_argument("--side-by-side", help=argparse.SUPPRESS)
    group.add_argument("--master-pid", type=int, help=argparse.SUPPRESS)
    group.add_argument("--inputs-folder", help=argparse.SUPPRESS)
    group.add_argument("--no-run-figures", action="store_true",
                       help="leave out the per-run figures (memory, CPU, "
                       "failures), for example to measure what they cost")
    group.add_argument("--without", type=interventions.parse, metavar="NAME[,NAME...]",
                       help="leave out what the harness does around the batches, "
                       "to measure what it costs (docs/figures.md): %s"
                       % "; ".join("%s: %s" % item
                                   for item in interventions.INTERVENTIONS.items()))
    for option in workload_options():
        # A URL names a server, which no preset does.
        suffix = "" if option.parse else " (overrides the preset)"
        group.add_argument(option.flag, dest=option.param, type=option.convert,
                           metavar=option.metavar, help=option.help + suffix)


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def duration(text):
    """'90', '90s', '10m', '1h', '2m30s' -> seconds (> 0)."""
    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError("%r is not a positive duration" % text)
    match = _DURATION.fullmatch(text.strip().lower()) if text.strip() else None
    if match is None or not any(match.groups()):
        raise argparse.ArgumentTypeError(
            "%r is not a duration (examples: 90s, 10m, 1h30m)" % text)
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError("%r is not a positive duration" % text)
    return total


def percentage(text):
    """--precision: a share in percent, 0 < PCT <= 100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not 0 < value <= 100 or value != value:
        raise argparse.ArgumentTypeError(
            "%s is out of range: give a percentage above 0, at most 100" % text)
    return value


def dask_scheduler(text):
    """--dask-scheduler: a scheduler's address, tcp:// or tls://."""
    from concbench.models.dask import check_address

    try:
        return check_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).partition(": ")[2] or str(exc)) from None


def cpu_count(text):
    """--cpus: a whole number of CPUs, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number of CPUs" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("%s is out of range: give 1 CPU or more" % text)
    if value > 4096:
        raise argparse.ArgumentTypeError("%s is out of range: at most 4096 CPUs" % text)
    return value


def seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError("%s is out of range [0, 2**32)" % text)
    return value


def parser(prog="bench.py"):
    """bench.py's options alone, without pyperf's (for tests and tools)."""
    result = argparse.ArgumentParser(prog=prog)
    add_options(result)
    return result


def forward_options(cmd, args):
    """pyperf's add_cmdline_args: give workers the same matrix."""
    flags = {option.param: option.flag for option in workload_options()}
    for dest in SELECTION + tuple(flags):
        value = getattr(args, dest)
        flag = flags.get(dest) or OWN_FLAGS.get(dest) or "--" + dest.replace("_", "-")
        if value is True:
            cmd.append(flag)
        elif value is not None and value is not False:
            cmd.extend((flag, str(value)))


def workload_module_from_argv(argv):
    """--workload-module must be imported before the parser is built: its
    workloads may bring options."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--workload-module")
    known, _ = early.parse_known_args(argv)
    return known.workload_module


def preset_from_argv(argv):
    """The preset decides pyperf's defaults, so read it before the Runner."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--preset", default=DEFAULT_PRESET)
    known, _ = early.parse_known_args(argv)
    return PRESETS.get(known.preset, PRESETS[DEFAULT_PRESET])

"""The run as a whole: the GIL state it asks of its workers and warns
about, the metadata every benchmark of its file shares, and the pyperf hook
that records each run's figures."""

import os
import sys

from concbench import ladder, schema
from concbench.run import gil
from concbench.run.cell import library_versions
from concbench.run.presets import PRESETS
from concbench.run.progress import fail, say
from concbench.run.run_figures import HOOK_NAME


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
    if args.without:
        meta[schema.HARNESS_WITHOUT] = args.without
    if args.force_gil:
        meta[schema.GIL_FORCED] = args.force_gil
    meta[schema.GIL_EXPECTED] = "yes" if expected_gil(args) else "no"
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    meta[schema.GIL] = "enabled" if is_gil_enabled is None or is_gil_enabled() \
        else "disabled"
    meta[schema.FREE_THREADED_BUILD] = \
        "yes" if sysconfig.get_config_var("Py_GIL_DISABLED") else "no"
    meta.update(library_versions(("pyperf", "Pillow", "uvloop", "psutil")))
    meta.update(cpu_metadata(args))
    return meta


def cpu_metadata(args):
    """The machine's CPUs as the master read them, and what the ladders
    were sized for."""
    machine = ladder.machine(args)
    meta = {schema.CPUS_USABLE: machine.usable, schema.CPUS_AFFINITY: machine.affinity,
            schema.CPUS_SIZED_FOR: ladder.sized_for(args)}
    if machine.physical:
        meta[schema.CPU_CORES] = machine.physical
    if machine.quota is not None:
        meta[schema.CPU_QUOTA] = machine.quota
    if machine.limited_by():
        meta[schema.CPUS_LIMITED_BY] = ", ".join(machine.limited_by())
    if machine.note:
        meta[schema.CPUS_NOTE] = machine.note
    return meta


def enable_run_figures(args):
    """Per-run figures (concbench.run.run_figures) are on by default, through
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

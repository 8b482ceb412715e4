"""What the harness does around a model's batches to cut noise, and the
switch that leaves any of it out (``bench.py --without NAME``).

Each of these is allowed only because it leaves the model as a script
without the harness would run it: bench.py's speedups agree with a bare
script of the same work, on GIL and free-threaded builds
(tests/test_transparency.py), and what each costs a model that uses both
cores is measured with ``--without`` (docs/figures.md, "The harness
leaves the model as it is"). Something that changed the model would be
worse than noise: a gc.freeze() of the worker's heap keeps a free-threaded
3.13 from making the item functions immortal when the first thread
starts, and its threads then read far below a script's (docs/figures.md,
"bench.py against the bare script, on both builds").
"""

INTERVENTIONS = {
    "partner": "the reference's batches run in a copy forked from the worker "
               "(concbench.run.partner); without it, in the worker itself",
    "pinning": "a single-threaded model's worker, and the reference's process "
               "beside it, kept on one CPU (concbench.run.partner.pin_worker)",
    "prime": "one item of the model's side run, untimed, before its first "
             "batch (Model.prime)",
    "sampler": "the memory sampler reads the process tree every 5 to 10 ms "
               "during a batch; without it, only at the batch's start and end",
    "probe": "the machine's speed probe before every batch "
             "(concbench.run.batch.machine_probe); without it, no probe_s",
    "collect": "a full garbage collection before every batch, on both sides of "
               "a pair, so that no batch inherits the collector's counts from "
               "the one before",
}

# What --without left out in this process: process state, set once.
_left_out = frozenset()


def parse(text):
    """--without's value: names of INTERVENTIONS, separated by commas."""
    import argparse

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in INTERVENTIONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            "%r: expected one or more of %s, separated by commas"
            % (text, ", ".join(INTERVENTIONS)))
    return ",".join(name for name in INTERVENTIONS if name in names)


def leave_out(names):
    """Set the interventions this process leaves out (--without's value,
    or None)."""
    global _left_out
    _left_out = frozenset((names or "").split(",")) - {""}


def used(name):
    """Whether this process does intervention ``name``."""
    assert name in INTERVENTIONS, name
    return name not in _left_out

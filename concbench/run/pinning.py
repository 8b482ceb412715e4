"""Keeping a process on one CPU, and what its helpers get instead.

A single-threaded model's worker and the process that runs the reference's
batches beside it are kept on one CPU (``concbench.run.partner``). A process
they start afterwards inherits that one CPU: their memory samplers, which
read the process tree every 5 to 10 ms during a batch, would then run on
the batch's CPU and on its clock. Each helper gets the CPUs its process had
before it was pinned instead (an affinity the user set, pyperf's
``--affinity``, stays as it was).
"""

import os

# The CPUs this process could use before it was first kept on one.
_unpinned = None


def pin(cpu):
    """Keep this process on ``cpu`` (OSError if it may not run there)."""
    global _unpinned
    if _unpinned is None:
        _unpinned = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})


def unpinned_cpus():
    """The CPUs this process had before it was pinned (its own now if it
    never was); None where affinity is not supported."""
    if _unpinned is not None:
        return set(_unpinned)
    if hasattr(os, "sched_getaffinity"):
        return os.sched_getaffinity(0)
    return None


def release(pid):
    """Give the helper process ``pid`` the CPUs this one had before it was
    pinned; nothing where that is not possible."""
    cpus = unpinned_cpus()
    if not cpus or not hasattr(os, "sched_setaffinity"):
        return
    try:
        os.sched_setaffinity(pid, cpus)
    except OSError:     # gone already, or not allowed: where it is will do
        pass

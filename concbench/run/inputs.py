"""A run's inputs and reference results, made once and shared by its workers.

Every worker needs its workload's items and the reference results its
batches are checked against. Making them can cost a worker more than a
pair of batches (measured in 987ad69: git show 987ad69), in every worker
of every round. A workload that says its inputs can be kept
(``Workload.shared_inputs``) has them made by the first worker that needs
them and pickled into the run's folder, which the master makes and
removes at its end; the other workers load them. They are the same
seeded inputs and the same results either way, and neither is timed.

A master killed outright (SIGKILL, the OOM killer) cannot remove its
folder, so the folder's name holds the master's pid, and the next run
removes the folders of masters that are gone. A folder removed under a
run that lives (a master of another PID namespace sharing the folder of
temporary files) costs that run's workers only the time to make their
inputs: a worker that finds no folder makes them and keeps nothing.
"""

import hashlib
import os
import pickle
import re
import shutil
import tempfile

from concbench.run.lifeline import alive

PREFIX = "concbench-inputs-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-")


def make_folder():
    """The run's folder (the master's), removed when the master ends."""
    from concbench.run.cleanup import on_exit

    remove_orphans()
    folder = tempfile.mkdtemp(prefix="%s%d-" % (PREFIX, os.getpid()))
    on_exit(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


def remove_orphans():
    """Remove this user's run folders whose master is gone."""
    parent = tempfile.gettempdir()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        owned = _OWNED.match(name)
        if not owned or _running(int(owned.group(1))):
            continue
        path = os.path.join(parent, name)
        try:
            if os.lstat(path).st_uid != os.geteuid():
                continue
        except (OSError, AttributeError):     # gone already; no uids here
            continue
        shutil.rmtree(path, ignore_errors=True)


def _running(pid):
    try:
        return alive(pid)
    except (OverflowError, OSError):    # no such pid here: not ours to judge
        return True


def _key(workload):
    text = "%s.%s|%r" % (type(workload).__module__, type(workload).__qualname__,
                         sorted(workload.params.items()))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def items_and_reference(workload, folder=None):
    """(items, reference results) of ``workload``: loaded from ``folder``
    when an earlier worker of the run kept them there, else made (and kept,
    when the workload allows it)."""
    shared = folder and getattr(workload, "shared_inputs", False) and os.path.isdir(folder)
    path = os.path.join(folder, _key(workload) + ".pickle") if shared else None
    if path:
        try:
            with open(path, "rb") as kept:
                return pickle.load(kept)
        except Exception:   # absent, or damaged: pickle raises many kinds
            pass
    items = workload.make_items()
    reference = workload.reference(items)
    if path:
        temporary = "%s.%d.tmp" % (path, os.getpid())
        try:
            with open(temporary, "wb") as kept:
                pickle.dump((items, reference), kept, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            try:
                os.unlink(temporary)
            except OSError:
                pass
    return items, reference

"""A process of the run ends when the process that started it ends.

bench.py's master starts pyperf workers; a worker starts the memory sampler
and its model's pool processes (a forkserver's pool processes are the
forkserver's children). Were the master killed outright (SIGKILL, the OOM
killer), nothing would stop them: a worker in a long batch would go on
loading the machine after the user thinks the run is gone. So each of them
calls ``follow(parent)`` first thing, with the pid of the process that
started it:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills it the
  moment its parent dies. The flag fires when the parent *thread* that
  started it ends, so every process that follows is started from its
  parent's main thread (pyperf's master, the worker's batches), or by a pool
  whose processes live no longer than the thread that made them;
- elsewhere, and for a forkserver's children, a thread that waits for the
  process to follow, blocked in the kernel (a pidfd, or kqueue; else a look
  every 0.2 s), and then kills its own process.

The parent may already be gone when ``follow`` runs: it then checks that its
parent is still ``parent`` and ends at once if not.
"""

import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1


def follow(parent):
    """End this process (SIGKILL) when its parent, ``parent``, ends; at once
    if it has ended already. Does nothing for ``parent`` None or 0."""
    if not parent:
        return
    if not (sys.platform.startswith("linux") and _pdeathsig()):
        _watch(parent)
    if os.getppid() != parent:
        _end()


def follow_process(parent):
    """End this process when the process ``parent`` ends, whichever of its
    threads started this one (a cluster's workers are started from a
    thread of its own, which ``PR_SET_PDEATHSIG`` would follow instead)."""
    if not parent:
        return
    _watch(parent)
    if not alive(parent):
        _end()


def pool_initializer(worker):
    """A process pool's ``initializer``: the pool process ends with the
    pyperf worker ``worker`` that made the pool. Forked or spawned by the
    worker, it follows its parent. A forkserver's child follows the worker
    itself: the forkserver lives as long as any process it made holds its
    pipe, so it would wait for them as they waited for it."""
    parent = os.getppid()
    if parent == worker:
        follow(parent)
    elif _parent_of(parent) in (worker, None):
        _watch(worker)
    else:   # the worker is gone already
        _end()


def _parent_of(pid):
    """``pid``'s parent, from /proc (None where there is none)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as stat:
            return int(stat.read().rpartition(b")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _end():
    os.kill(os.getpid(), signal.SIGKILL)


def _pdeathsig():
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(pid):
    """A daemon thread that ends this process when ``pid`` ends. It waits
    blocked in the kernel (a pidfd on Linux, kqueue on macOS and the BSDs),
    holding no lock, so it takes nothing from the threads being measured;
    elsewhere it looks every 0.2 s."""
    import select

    wait = None
    if hasattr(os, "pidfd_open"):
        try:
            handle = os.pidfd_open(pid)
        except OSError:     # gone already
            _end()

        def wait():
            select.select([handle], [], [])
            _end()
    elif hasattr(select, "kqueue"):
        try:
            queue = select.kqueue()
            queue.control([select.kevent(pid, select.KQ_FILTER_PROC, select.KQ_EV_ADD,
                                         select.KQ_NOTE_EXIT)], 0)
        except OSError:     # gone already
            _end()

        def wait():
            queue.control(None, 1)
            _end()
    else:
        def wait():
            while alive(pid):
                threading.Event().wait(0.2)
            _end()
    threading.Thread(target=wait, name="lifeline", daemon=True).start()


def alive(pid):
    """Whether ``pid`` runs (another user's counts)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True

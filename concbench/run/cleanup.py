"""No process a run started outlives it, however the run ends.

bench.py's master ends through its exit handlers whether it finishes, fails,
or gets SIGINT (Ctrl-C), SIGTERM or SIGHUP; the load server, in a session of
its own, also watches its parent and exits when it is gone (SIGKILL).
"""

import atexit
import contextlib
import signal
import sys
import threading

# The signals that end a run through its exit handlers.
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# The exit handlers: process state.
_at_exit = []


def adopt_orphans():
    """Make this process the reaper of its descendants' orphans (Linux), so
    that pool processes of a worker killed by pyperf can still be found and
    stopped at exit."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def on_exit(function):
    """Call ``function`` when this process ends, the latest registered first.
    While these handlers run, a further signal cannot cut them short."""
    if not _at_exit:
        atexit.register(_run_exit_handlers)
    _at_exit.append(function)


def _run_exit_handlers():
    if threading.current_thread() is threading.main_thread():
        for signum in ENDING:
            signal.signal(signum, signal.SIG_IGN)
    while _at_exit:
        function = _at_exit.pop()
        try:
            function()
        except Exception as exc:    # the next handler still runs
            print("exit handler %s failed: %s" % (getattr(function, "__qualname__",
                                                          function), exc),
                  file=sys.stderr, flush=True)


def stop_descendants(timeout=3.0):
    """At exit: no process this run started outlives it."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            child.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(children, timeout=timeout)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=timeout)


class Stopped(SystemExit):
    """Raised by SIGTERM or SIGHUP: the process ends through its exit
    handlers, with the shell's status for the signal."""

    def __init__(self, signum):
        super().__init__(128 + signum)
        self.signum = signum


# The ending signals this process received: process state.
_received = []


def ending_error(signum):
    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def exit_on_signals():
    """SIGTERM and SIGHUP end the process as Ctrl-C does, through its exit
    handlers. A signal ignored when it started (nohup) stays ignored.

    A handler's exception is lost when the handler happens to run inside a
    finalizer (a ``__del__`` that the garbage collector calls while a large
    results file is written, say): Python prints it and goes on. Each
    signal is therefore also kept, and ``stop_if_signalled`` raises it again
    where the run goes on to its next step."""
    def handler(signum, frame):
        _received.append(signum)
        raise ending_error(signum)
    for signum in ENDING:
        if signal.getsignal(signum) not in (signal.SIG_IGN, None):
            signal.signal(signum, handler)


def stop_if_signalled():
    """Raise the first ending signal received, if any (see exit_on_signals)."""
    if _received:
        raise ending_error(_received[0])


@contextlib.contextmanager
def signals_held():
    """Signals that arrive inside the block take effect as it ends, so that
    none can fall between starting a process and keeping its pid. (Python
    runs handlers in the main thread only; elsewhere this holds nothing.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held, previous = [], {}
    for signum in ENDING:
        handler = signal.getsignal(signum)
        if handler not in (signal.SIG_IGN, None):
            previous[signum] = handler
            signal.signal(signum, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)

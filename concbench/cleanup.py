"""No process a run started outlives it: bench.py master's exit handling."""

import sys


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


def stop_on_sigterm():
    """Turn SIGTERM into SystemExit so that exit handlers stop the server."""
    import signal

    def handler(signum, frame):
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, handler)

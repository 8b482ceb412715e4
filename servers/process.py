"""Start and stop the load server as a child process of bench.py's master.

The server runs in its own process (``python -m concbench.servers``) on
127.0.0.1 with a port it picks, so that its CPU is neither the benchmark's
nor in the benchmark's way. It runs in a session of its own: a Ctrl-C sent to
bench.py's process group does not reach it, so it ignores SIGINT when bench.py
ignores it, and stops when bench.py stops, through ``stop()``, which is
idempotent and called on every exit path (normal end, error, SIGINT, SIGTERM,
SIGHUP, pyperf's --timeout exit). Were bench.py killed outright, the server
sees its parent gone (``--exit-with``) and exits within a second.
"""

import os
import selectors
import signal
import subprocess
import sys
import threading
import time

from concbench import IMPORT_ROOT
from concbench.run.cleanup import signals_held


class LocalServer:
    def __init__(self, host="127.0.0.1", startup_timeout=30.0, env=None):
        self.host = host
        self.extra_env = env or {}
        self.startup_timeout = startup_timeout
        self.process = None
        self.url = None

    def start(self):
        """Start the server and return its URL. Whatever interrupts this
        (an exception, a signal) stops what was started before it goes on."""
        env = dict(os.environ)
        env.update(self.extra_env)
        env["PYTHONPATH"] = os.pathsep.join(
            [IMPORT_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        try:
            with signals_held():
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "concbench.servers", "--host", self.host,
                     "--port", "0", "--exit-with", str(os.getpid())],
                    stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=IMPORT_ROOT,
                    env=env, start_new_session=True)
            line = self._first_line()
            if not line.startswith("listening on "):
                raise RuntimeError(
                    "the local load server did not start (it said %r); "
                    "try: python -m concbench.servers --port 0" % line)
            # Keep reading so that the server never blocks on a full pipe
            # (a signal can land while the thread starts, too).
            threading.Thread(target=self._drain, daemon=True).start()
        except BaseException:
            self.stop()
            raise
        self.url = line.split()[-1]
        return self.url

    def _first_line(self):
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.startup_timeout
        try:
            while time.monotonic() < deadline:
                if selector.select(timeout=0.1):
                    line = self.process.stdout.readline().decode().strip()
                    if line or not self._ended(1.0):
                        return line
                    return "nothing, then exit status %s" % self._status()
            return "nothing within %.0f s" % self.startup_timeout
        finally:
            selector.close()

    def _drain(self):
        try:
            for _ in self.process.stdout:
                pass
        except (OSError, ValueError):
            pass

    def descendants(self):
        """The server's processes, its workers included (for cleanup checks)."""
        import psutil
        try:
            parent = psutil.Process(self.process.pid)
            return [parent] + parent.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def stop(self, timeout=5.0):
        """Stop the server's whole process group: SIGTERM, then SIGKILL for
        what is left after ``timeout``. A signal waits until it is done."""
        if self.process is None or self.process.returncode is not None:
            return
        with signals_held():
            # The main process's pid is its group's id; until the process is
            # reaped, that number cannot name another group.
            group = self.process.pid
            self._signal_group(group, signal.SIGTERM)
            self._ended(timeout)
            # A worker of the server may outlive it: the group outlives both.
            self._signal_group(group, signal.SIGKILL)
            self.process.wait()
            # SIGKILL takes effect when the killed process next runs: wait
            # until no member of the group runs any more.
            deadline = time.monotonic() + timeout
            while group_running(group) and time.monotonic() < deadline:
                time.sleep(0.01)
            reap_group(group)

    def _ended(self, timeout):
        """Wait up to ``timeout`` for the main process to end, without
        reaping it; return whether it ended."""
        deadline = time.monotonic() + timeout
        while True:
            if self._status() is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _status(self):
        """The main process's exit status if it ended (not reaped), else None."""
        if self.process.returncode is not None:
            return self.process.returncode
        try:
            ended = os.waitid(os.P_PID, self.process.pid,
                              os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:   # reaped already (SIGCHLD ignored)
            return self.process.poll()
        if ended is None:
            return None
        return (ended.si_status if ended.si_code == os.CLD_EXITED
                else -ended.si_status)

    @staticmethod
    def _signal_group(group, signum):
        try:
            os.killpg(group, signum)
        except (ProcessLookupError, PermissionError):
            pass


def group_running(group):
    """Whether a process of process group ``group`` still runs. On Linux a
    zombie (a process that ended and holds nothing but its exit status) does
    not count."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(group, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:     # ended meanwhile
            continue
        if int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            return True
    return False


def reap_group(group):
    """Reap the group's processes that ended as this process's children
    (orphans a subreaper adopted), so that no zombie is left of them."""
    try:
        while os.waitpid(-group, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass

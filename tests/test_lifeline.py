"""concbench.run.lifeline's ways of ending a process with the one it follows,
each run for real: the watching thread over a pidfd and, where a platform
has neither a pidfd nor kqueue, its look every 0.2 s; and a parent already
gone before ``follow`` runs. (kqueue is macOS's and the BSDs': this suite's
Linux has none to run.) The kill -9 tests of the whole run are in
tests/test_interrupts.py."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import ROOT

WATCHER = textwrap.dedent("""
    import os, select, sys, time
    if sys.argv[2] == "polling":
        del os.pidfd_open
        assert not hasattr(select, "kqueue")
    from concbench.run import lifeline
    lifeline._watch(int(sys.argv[1]))
    print("watching", flush=True)
    time.sleep(60)
    print("outlived", flush=True)
""")


@pytest.mark.quick
@pytest.mark.parametrize("way", ["pidfd", "polling"])
def test_a_watcher_ends_with_the_process_it_follows(tmp_path, way):
    followed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    script = tmp_path / "watcher.py"
    script.write_text(WATCHER)
    watcher = subprocess.Popen([sys.executable, str(script), str(followed.pid), way],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout.readline() == "watching\n"
        followed.kill()
        followed.wait()
        killed = time.monotonic()
        # Ended by its own SIGKILL: at once over a pidfd, within a look
        # (0.2 s) when polling; 5 s leaves a busy machine its delays.
        assert watcher.wait(timeout=5) == -signal.SIGKILL
        took = time.monotonic() - killed
        print("%s: ended %.3f s after the process it followed" % (way, took))
        assert watcher.stdout.read() == ""
    finally:
        for process in (followed, watcher):
            if process.poll() is None:
                process.kill()
                process.wait()


ORPHAN = textwrap.dedent("""
    import os, sys, time
    parent = os.getpid()
    if os.fork() == 0:
        while os.getppid() == parent:
            time.sleep(0.01)
        from concbench.run import lifeline
        lifeline.follow(parent)
        with open(sys.argv[1], "w") as out:
            out.write("outlived")
        os._exit(0)
    print(os.getpid(), flush=True)
""")


@pytest.mark.quick
def test_a_parent_gone_before_follow_ends_the_process_at_once(tmp_path):
    """The parent exits before its child calls follow(): PR_SET_PDEATHSIG
    can no longer fire, so follow() sees another parent and ends the child
    itself, before it does anything else."""
    script, mark = tmp_path / "orphan.py", tmp_path / "outlived"
    script.write_text(ORPHAN)
    proc = subprocess.run([sys.executable, str(script), str(mark)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and running(script):
        time.sleep(0.1)
    assert not running(script), "the orphan still runs"
    assert not mark.exists(), mark.read_text()


def running(script):
    """Whether a process runs ``script`` (the orphan's parent is gone, so
    its command line tells it)."""
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % name, "rb") as cmdline:
                if name.isdigit() and str(script).encode() in cmdline.read():
                    return True
        except OSError:
            pass
    return False

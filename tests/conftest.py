import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = str(ROOT / "bench.py")

# Set by .ci/run: tests that need a service fail instead of skipping.
REQUIRE_SERVICES = os.environ.get("CONCBENCH_REQUIRE_SERVICES") == "1"


# Files whose tests make tox environments under the checkout's .tox: one
# process at a time may build them.
TOX_FILES = {"test_versions.py", "test_interpreters.py", "test_transparency.py"}
# Files of long tests that share nothing: each test is a group of its own,
# so that they spread over both processes (the simulations run in one
# process each: the suite never runs more than two tests' work at once,
# which its margins were measured beside).
SPREAD_FILES = {"test_anytime.py"}
# The longest groups go out first (the tox environments' files, minutes
# together, and the simulations of known truth, half a minute or more
# each), so that the short ones even out the two processes' ends.
FIRST = ("tox", "test_anytime.py::test_the_runs_answers",
         "test_anytime.py::test_a_races_lower_ends")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (``--dist loadgroup``): a file's tests run in one
    process, so that its module fixtures (a server, a run that several
    tests read) are made once, and the files that build tox environments
    share one process. First of the hooks: xdist's own reads the marks to
    group the tests."""
    groups = {}
    for item in items:
        name = item.path.name
        group = ("tox" if name in TOX_FILES else item.nodeid if name in SPREAD_FILES
                 else name)
        item.add_marker(pytest.mark.xdist_group(group))
        groups[item] = next((rank for rank, start in enumerate(FIRST)
                             if group.split("/")[-1].startswith(start)), len(FIRST))
    items.sort(key=groups.get)


def skip_or_fail(reason):
    """Skip with a reason on a user's machine; fail under .ci/run."""
    if REQUIRE_SERVICES:
        pytest.fail(reason + " (CONCBENCH_REQUIRE_SERVICES=1 forbids skipping)")
    pytest.skip(reason)


def need_open_files(count):
    """Raise this process's soft limit on open files to its hard limit, as
    bench.py and the load server do for themselves; a hard limit too low
    for ``count`` sockets (and what pytest holds) skips, or fails under
    .ci/run, naming it."""
    from concbench.servers import raise_nofile_limit

    hard = raise_nofile_limit()
    if hard is not None and hard < count + 200:
        skip_or_fail("%d sockets need more open files than the hard limit here, %d "
                     "(ulimit -Hn)" % (count, hard))


def default_sigint():
    """preexec_fn for a child that a test interrupts: SIGINT as in a
    terminal's foreground job. A shell that runs the suite in the background
    starts it with SIGINT ignored, and children would inherit that."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def flat(text):
    """Console or report text with its line breaks undone: bench.py and
    report.py wrap lines at 120 columns, so a phrase may span two."""
    return " ".join(text.split())


def run(args, cwd, timeout=300):
    """Run a command line of the project in a subprocess, as a user would."""
    return subprocess.run([sys.executable] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def run_bench(args, cwd, timeout=300):
    return run([BENCH] + list(args), cwd, timeout)


def _adopt_orphans():
    """Orphans of the processes a test starts become this process's children
    (Linux), so that the check below sees them."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER


_adopt_orphans()
# Started by multiprocessing for the interpreter's lifetime, not by a test.
_LIFETIME_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _children():
    import psutil
    found = {}
    for child in psutil.Process().children(recursive=True):
        try:
            cmdline = " ".join(child.cmdline())
        except psutil.Error:
            continue
        # The memory sampler of this very process serves the in-process tests.
        own_sampler = "-m concbench.run.memory_sampler --sample %d" % os.getpid()
        if not any(helper in cmdline for helper in _LIFETIME_HELPERS + (own_sampler,)):
            found[child.pid] = (child, cmdline)
    return found


def _below(proc, pids):
    """Whether one of ``proc``'s ancestors is among ``pids``."""
    import psutil
    try:
        return any(parent.pid in pids for parent in proc.parents())
    except psutil.Error:
        return False


@pytest.fixture(autouse=True)
def no_orphans():
    """After each test, no process it started is still alive (5 s of grace).
    A new child of a process that was there before the test is that
    process's own: the embedded PostgreSQL of a module's tests starts its
    background processes when it likes (under a 1-CPU quota, during the
    first test), and killing one sends the server into crash recovery."""
    import psutil
    before = set(_children())
    yield
    left = {pid: entry for pid, entry in _children().items()
            if pid not in before and not _below(entry[0], before)}
    if not left:
        return
    _, alive = psutil.wait_procs([proc for proc, _ in left.values()], timeout=5)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    if alive:
        pytest.fail("processes left behind: %s" % "; ".join(
            "%d %s" % (proc.pid, left[proc.pid][1][:120]) for proc in alive))


# pyperf settings for end-to-end runs: as small as pyperf allows.
TINY_RUNNER = ["-p", "1", "-n", "1", "-w", "0", "--quiet"]


def preset_names(cls, preset, cpus=None):
    """The model names workload class ``cls`` runs in ``preset``, its
    ladders sized for ``cpus`` usable CPUs (None: this machine's)."""
    from concbench import ladder
    from concbench.run.options import parser
    from concbench.run.presets import workload_plan

    args = parser().parse_args(["--cpus", str(cpus)] if cpus else [])
    params, entries = workload_plan(preset, cls)
    items = params.get("items", cls.defaults().get("items"))
    return ladder.resolve(entries, args, items, cls.most_workers)


KEEP = object()


def replace_values(node, choose):
    """Rewrite a parsed JSON file in place: at every key of every object,
    ``choose(key, value)`` gives the value's replacement, or KEEP to leave
    it and look inside it."""
    if isinstance(node, dict):
        for key, value in node.items():
            new = choose(key, value)
            if new is KEEP:
                replace_values(value, choose)
            else:
                node[key] = new
    elif isinstance(node, list):
        for value in node:
            replace_values(value, choose)

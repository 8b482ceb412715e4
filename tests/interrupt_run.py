"""One run of bench.py, signalled at chosen moments and watched from a reaper
of its own: ``python tests/interrupt_run.py SPEC`` prints one JSON line.

This process becomes the subreaper of everything the run starts (Linux), so
every process the run leaves behind, the load server in its session of its
own included, ends up as its descendant: nothing can escape the count. Each
attempt runs in such a process of its own, so attempts can run side by side.

SPEC is JSON: workdir, args (bench.py's), signal (a name, or null), target
("group": a terminal's Ctrl-C or hangup; "main": kill PID; "worker": its
running pyperf worker, bench.py stopped meanwhile), sigint ("ignore"
or "default": how bench.py starts), moments (seconds after the start, or
"server": the moment the load server's process exists, still starting;
"database": the moment the embedded PostgreSQL's postmaster exists;
"sampler": the moment a worker's memory sampler exists; "pool" and
"forkserver pool": the moment a model's pool process exists, forked by a
worker or by a worker's forkserver; "write": the moment a write of the
results file is in progress), every
(null, or [low, high]: after the moments, the signal again every so many
seconds, drawn at random, until bench.py ends), bound (seconds bench.py may
take to end).
"""

import ctypes
import json
import os
import random
import signal
import subprocess
import sys
import time

import psutil

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "bench.py")
POLL = 0.005


def reap():
    """Collect the exit status of orphans that ended as this process's."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def alive_descendants():
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                found.append((proc, " ".join(proc.cmdline())))
        except psutil.Error:
            pass
    return found


def is_server(cmdline):
    return "-m concbench.servers" in cmdline


def is_worker(cmdline):
    return "--worker" in cmdline.split() and "--worker-task" in cmdline


def pool_processes():
    """(process, its parent's command line) of a model's pool: children of
    a pyperf worker (a fork or spawn pool's), or of its forkserver, that are
    not one of its helpers (its memory sampler, its forkserver, the resource
    tracker: started before its batches)."""
    found = []
    for proc, cmdline in alive_descendants():
        try:
            parent = proc.parent()
            above = " ".join(parent.cmdline()) if parent else ""
        except psutil.Error:
            continue
        if is_helper(cmdline, above):
            continue
        if is_worker(above) or FORKSERVER in above:
            found.append((proc, above))
    return found


FORKSERVER = "forkserver import main"
SAMPLER = "concbench.run.memory_sampler"
POSTMASTER = "pginstall/bin/postgres "
TRACKER = "resource_tracker import main"


def is_helper(cmdline, above):
    """Whether a process is one a worker starts besides its pools: its
    memory sampler, and for a forkserver or spawn pool the forkserver and
    the resource tracker (a forkserver pool's processes carry the
    forkserver's command line: they are its children, not the worker's)."""
    return (SAMPLER in cmdline or TRACKER in cmdline
            or FORKSERVER in cmdline and is_worker(above))


def writing(workdir):
    return any(name.startswith(".out.json.") for name in os.listdir(workdir))


def wait_for(moment, start, proc, workdir):
    """Wait for the moment; False if bench.py ended first."""
    while proc.poll() is None:
        if moment == "server":
            if any(is_server(cmdline) for _, cmdline in alive_descendants()):
                return True
        elif moment == "database":
            if any(POSTMASTER in c for _, c in alive_descendants()):
                return True
        elif moment == "sampler":
            if any("concbench.run.memory_sampler" in c for _, c in alive_descendants()):
                return True
        elif moment == "pool":
            if pool_processes():
                return True
        elif moment == "forkserver pool":
            if any(FORKSERVER in above for _, above in pool_processes()):
                return True
        elif moment == "write":
            if writing(workdir):
                return True
        elif time.monotonic() - start >= moment:
            return True
        time.sleep(POLL if moment == "write" else 0.02)
    return False


def send(proc, signum, target):
    if target == "main":
        os.kill(proc.pid, signum)
    elif target == "worker":
        return kill_a_worker(proc, signum)
    else:
        os.killpg(proc.pid, signum)
    return None


def kill_a_worker(proc, signum):
    """Stop bench.py (SIGSTOP: it can clean nothing up meanwhile), send the
    signal to its running pyperf worker that has a pool, and time how long
    the worker's own processes (its pool, its sampler) outlive it; then let
    bench.py go on. A worker that ends while it is being found is passed
    over for the next pool's."""
    for _ in range(20):
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            found = stopped_worker()
        except psutil.Error:
            found = None
        if found is None:
            os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.05)
            if not wait_for("pool", time.monotonic(), proc, None):
                break
            continue
        try:
            worker, children = found
            names = [name for name, _ in named(children)]
            worker.send_signal(signum)
            killed = time.monotonic()
            running = children
            while time.monotonic() - killed < 5.0:
                reap()
                running = [c for c in children if alive(c)]
                if not running:
                    break
                time.sleep(0.02)
            return {"worker": worker.pid, "children": names,
                    "children_gone": None if running else round(time.monotonic() - killed, 3)}
        except psutil.Error as exc:     # it ended meanwhile
            return {"worker": None, "error": str(exc)}
        finally:
            os.kill(proc.pid, signal.SIGCONT)
    return {"worker": None}


def stopped_worker():
    """(a running pyperf worker whose sampler runs beside two or more other
    processes of its own: its pool's, or its pool's and the copy of it that
    runs the reference's batches, or that copy running the model with its
    pool; its descendants)."""
    for worker in [p for p, c in alive_descendants() if is_worker(c)]:
        if alive(worker):
            children = worker.children(recursive=True)
            names = named(children)
            if (any(SAMPLER in name for name, _ in names)
                    and sum(not is_helper(name, above) for name, above in names) >= 2):
                return worker, children
    return None


def named(children):
    """[(command line, its parent's)] of ``children``; ("", "") for one
    that ended meanwhile (a pool process not yet reaped is a zombie)."""
    names = []
    for child in children:
        try:
            parent = child.parent()
            names.append((" ".join(child.cmdline()),
                          " ".join(parent.cmdline()) if parent else ""))
        except psutil.Error:
            names.append(("", ""))
    return names


def alive(process):
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def main(spec):
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER
    workdir, signum = spec["workdir"], spec["signal"]
    signum = getattr(signal, signum) if signum else None
    ignore = spec.get("sigint") == "ignore"

    def disposition():
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignore else signal.SIG_DFL)
        # A suite started under nohup would pass its ignored hangup on, and
        # bench.py keeps an ignored SIGHUP ignored: each attempt starts as
        # a terminal's command does.
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    start = time.monotonic()
    with open(os.path.join(workdir, "stderr.txt"), "w") as stderr:
        proc = subprocess.Popen([sys.executable, BENCH] + spec["args"], cwd=workdir,
                                stdout=subprocess.DEVNULL, stderr=stderr,
                                start_new_session=True, preexec_fn=disposition)
    sent, killed, server_before = [], None, []
    for moment in spec.get("moments", []):
        if not wait_for(moment, start, proc, workdir):
            break
        # Whether the load server was running when the signal was sent.
        server_before.append(any(is_server(c) for _, c in alive_descendants()))
        killed = send(proc, signum, spec["target"])
        sent.append(round(time.monotonic() - start, 3))
    if spec.get("every"):
        while proc.poll() is None:
            time.sleep(random.uniform(*spec["every"]))
            if proc.poll() is None:
                send(proc, signum, spec["target"])
                sent.append(round(time.monotonic() - start, 3))
    signalled = time.monotonic()
    try:
        proc.wait(timeout=spec["bound"])
        hung = False
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    ended = time.monotonic()
    # Then whatever it started must be gone within 5 s; the server's exit
    # is timed from the signal (for SIGKILL: its watch of its parent).
    # What is still running 2 s after the signal, and when the last process
    # the run started was gone (None: some were still there after 5 s).
    server_gone = left_at_2 = gone = None
    deadline = ended + 5.0
    while True:
        reap()
        left = alive_descendants()
        since = time.monotonic() - signalled
        if server_gone is None and not any(is_server(c) for _, c in left):
            server_gone = round(since, 3)
        if left_at_2 is None and since >= 2.0:
            left_at_2 = [c for _, c in left]
        if not left:
            gone = round(since, 3)
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    for leftover, _ in left:
        try:
            leftover.kill()
        except psutil.Error:
            pass
    psutil.wait_procs([p for p, _ in left], timeout=5)
    reap()
    with open(os.path.join(workdir, "stderr.txt")) as stderr:
        err = stderr.read()
    out = os.path.join(workdir, "out.json")
    names, invalid = [], None
    if os.path.exists(out):
        import pyperf
        try:
            names = pyperf.BenchmarkSuite.load(out).get_benchmark_names()
        except Exception as exc:    # any failure to read it is the finding
            invalid = "%s: %s" % (type(exc).__name__, exc)
    return {"status": proc.returncode, "sent": sent, "hung": hung,
            "took": round(ended - start, 3), "server_gone": server_gone,
            "server_before": server_before,
            "left_at_2": left_at_2 or [], "gone": gone, "worker_killed": killed,
            "left": [c for _, c in left], "names": names, "invalid": invalid,
            "temporary": [n for n in os.listdir(workdir) if n.startswith(".out.json.")],
            "stderr_tail": err.strip().splitlines()[-12:],
            # bench.py's own last words, or pyperf's for its master: a worker
            # the Ctrl-C caught as Python started writes "Fatal Python
            # error: " and the rest of its line in pieces, and the master's
            # line can land between them
            "said": [line for line in err.splitlines() if any(words in line for words in (
                "bench.py: stopped", "bench.py: error", "Benchmark interrupted"))]}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))

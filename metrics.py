"""Per-run figures in the pyperf JSON, through pyperf's hook mechanism.

pyperf creates a hook instance for the warm-up phase and another for the
values phase of each worker process and calls ``teardown(metadata)`` at the
end of each; the values phase comes last, so the run's metadata describes
the timed values, not the warm-ups. The timed function (bench.py) brackets
each batch with ``BatchProbe`` and adds the checked batch's figures with
``record()``.

Memory is sampled by a separate process (``python -m metrics --sample PID``),
not by a thread of the worker, which would compete for the GIL with the
threads being measured. It sums PSS over the worker and all its descendants:
PSS splits each shared page between the processes sharing it, so forked pool
workers are not counted several times for the pages they share, as summed
RSS would. CPU and context switches come from the kernel's own counters,
read before and after each batch outside the timed region.
"""

import os
import select
import subprocess
import sys
import time

HOOK_NAME = "concbench"
LINUX = sys.platform.startswith("linux")

_run = {}
_state = {"active": False, "sampler": None}


# -- what the timed function uses ---------------------------------------------

def active():
    """True while the hook is enabled for the current phase."""
    return _state["active"]


def record(figures):
    """Add one batch's figures: counts and seconds add up, peaks take the max."""
    for key, value in figures.items():
        if key.endswith("_peak"):
            _run[key] = max(_run.get(key, value), value)
        elif key.endswith("_base"):
            _run.setdefault(key, value)
        else:
            _run[key] = _run.get(key, 0) + value


def _tree(exclude):
    import psutil
    try:
        return [child for child in psutil.Process().children(recursive=True)
                if child.pid not in exclude]
    except psutil.NoSuchProcess:
        return []


def tree_counters(exclude=()):
    """CPU seconds and context switches so far of this process and its tree.

    This process (every thread; CPU at nanosecond resolution), children that
    already exited and were reaped (getrusage), and live descendants such as
    a reused pool's workers (psutil).
    """
    import psutil

    cpu = time.process_time()
    voluntary = involuntary = 0
    try:
        import resource
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
            usage = resource.getrusage(who)
            voluntary += usage.ru_nvcsw
            involuntary += usage.ru_nivcsw
            if who == resource.RUSAGE_CHILDREN:
                cpu += usage.ru_utime + usage.ru_stime
    except ImportError:     # Windows: live processes only
        switches = psutil.Process().num_ctx_switches()
        voluntary, involuntary = switches.voluntary, switches.involuntary
    for child in _tree(exclude):
        try:
            times = child.cpu_times()
            switches = child.num_ctx_switches()
        except psutil.NoSuchProcess:
            continue
        cpu += times.user + times.system
        voluntary += switches.voluntary
        involuntary += switches.involuntary
    return cpu, voluntary, involuntary


class BatchProbe:
    """Figures of one batch: tree CPU, context switches, sampled memory."""

    def __init__(self):
        sampler = _state["sampler"]
        if sampler is None or not sampler.alive():
            sampler = _state["sampler"] = Sampler(os.getpid())
        self.sampler = sampler
        self.base = sampler.start()
        self.counters = tree_counters(exclude={sampler.pid})

    def finish(self):
        """Call right after the batch, before anything else."""
        after = tree_counters(exclude={self.sampler.pid})
        peak = self.sampler.stop()
        cpu, voluntary, involuntary = (b - a for a, b in zip(self.counters, after))
        figures = {"cpu_tree": cpu, "ctx_switches_voluntary": voluntary,
                   "ctx_switches_involuntary": involuntary,
                   "mem_tree_base": self.base["memory"],
                   "mem_tree_peak": max(peak["memory"], self.base["memory"]),
                   "threads_peak": max(peak["threads"], self.base["threads"]),
                   "processes_peak": max(peak["processes"], self.base["processes"]),
                   "mem_samples": peak["samples"]}
        _run["mem_method"] = peak["method"]
        return figures


# -- the pyperf hook ------------------------------------------------------------

class RunFigures:
    """The ``concbench`` pyperf hook (entry point group ``pyperf.hook``)."""

    def __init__(self):
        _run.clear()
        _state["active"] = True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None

    def teardown(self, metadata):
        figures = dict(_run)
        timed = figures.pop("timed_seconds", 0.0)
        for key, value in figures.items():
            metadata[key] = round(value, 6) if isinstance(value, float) else value
        if "server_cpu" in figures and timed > 0:
            # The share of the batches' wall time the server spent on CPU.
            metadata["server_busy"] = round(figures["server_cpu"] / timed, 4)


# -- the memory sampler (a separate process) ------------------------------------

class Sampler:
    """Drives ``python -m metrics --sample PID`` over a pipe."""

    def __init__(self, pid):
        env = dict(os.environ)
        root = os.path.dirname(os.path.abspath(__file__))
        env["PYTHONPATH"] = os.pathsep.join(
            [root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "metrics", "--sample", str(pid)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
            bufsize=1)
        self.pid = self.process.pid

    def alive(self):
        return self.process.poll() is None

    def _ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the memory sampler exited (status %s)"
                               % self.process.poll())
        method, memory, threads, processes, samples = line.split()
        return {"method": method, "memory": int(memory), "threads": int(threads),
                "processes": int(processes), "samples": int(samples)}

    def start(self):
        return self._ask("start")

    def stop(self):
        return self._ask("stop")


def _children_linux(pid):
    children = []
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                children.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return children


def _pss_linux(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def _threads_linux(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def sample_tree(root, exclude, method):
    """Summed memory, threads and processes of ``root`` and its descendants."""
    memory = threads = processes = 0
    if method == "pss":
        pending = [root]
        while pending:
            pid = pending.pop()
            if pid in exclude:
                continue
            try:
                memory += _pss_linux(pid)
                threads += _threads_linux(pid)
            except OSError:     # exited between listing and reading
                continue
            processes += 1
            pending.extend(_children_linux(pid))
        return memory, threads, processes
    import psutil
    try:
        top = psutil.Process(root)
        tree = [top] + top.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0, 0
    for proc in tree:
        if proc.pid in exclude:
            continue
        try:
            info = proc.memory_full_info() if method == "uss" else proc.memory_info()
            memory += getattr(info, method)
            threads += proc.num_threads()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        processes += 1
    return memory, threads, processes


def choose_method(pid):
    if LINUX and os.path.exists("/proc/%d/smaps_rollup" % pid):
        return "pss"
    try:
        import psutil
        psutil.Process(pid).memory_full_info().uss
        return "uss"
    except Exception:
        return "rss"


def sampler_main(root):
    """Answer each 'start' and 'stop' line with one line of figures.

    Between a start and a stop, sample every 5 ms for the first 50 ms (short
    batches), then every 20 ms or 50 times the last sample's cost, whichever
    is longer, keeping the sampler's own CPU to about 2% of one core.
    """
    me = os.getpid()
    method = choose_method(root)
    exclude = {me}
    stdin = sys.stdin

    def reply(memory, threads, processes, samples):
        sys.stdout.write("%s %d %d %d %d\n" % (method, memory, threads,
                                               processes, samples))
        sys.stdout.flush()

    while True:
        line = stdin.readline()
        if not line or line.strip() != "start":
            return
        memory, threads, processes = sample_tree(root, exclude, method)
        reply(memory, threads, processes, 1)
        peak = [memory, threads, processes]
        samples = 1
        started = time.monotonic()
        cost = 0.0
        while True:
            if time.monotonic() - started < 0.05:
                interval = 0.005
            else:
                interval = max(0.02, cost * 50)
            ready, _, _ = select.select([stdin], [], [], interval)
            if ready:
                break
            before = time.perf_counter()
            figures = sample_tree(root, exclude, method)
            cost = time.perf_counter() - before
            peak = [max(p, f) for p, f in zip(peak, figures)]
            samples += 1
        command = stdin.readline().strip()
        figures = sample_tree(root, exclude, method)
        peak = [max(p, f) for p, f in zip(peak, figures)]
        reply(peak[0], peak[1], peak[2], samples + 1)
        if command != "stop":
            return


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--sample":
        sampler_main(int(sys.argv[2]))
    else:
        print("usage: python -m metrics --sample PID", file=sys.stderr)
        sys.exit(2)

"""How much memory, how many threads and processes a process tree holds:
PSS summed over the tree from /proc on Linux (each shared page split
between the processes sharing it), psutil's figures elsewhere. Read by the
memory sampler (``concbench.run.memory_sampler``), a process of its own."""

import os
import sys
import time

from concbench.run import proc_files

LINUX = sys.platform.startswith("linux")


MIB = 1024 * 1024
# PSS is read again when the tree's RSS grows past its last high by this
# share (and a MiB): a new peak is then measured, not estimated.
RSS_GROWTH = 1.05


class TreeMemory:
    """The process tree's PSS, estimated often and measured now and then.

    Reading PSS costs milliseconds per large process (the kernel walks its
    page tables), RSS microseconds. So every sample reads RSS and estimates
    each process's PSS as its RSS minus the shared part (RSS - PSS) found at
    its last PSS reading; a new process is read as soon as it appears and
    counted by its private pages (USS) until the next full reading, since
    the pages it shares are already in the others' figures; PSS is read for
    all of them when the tree's RSS grows RSS_GROWTH past its last high and at
    least every second, as often as a budget of 1% of the sampler's time
    allows.

    The tree is listed again at the first sample after any process or
    thread was created on the machine (``proc_files.last_pid``), within a budget of
    10% of the sampler's time, and at least every 50 ms: finding children
    means reading a file per thread, which adds up in a process with
    hundreds of threads, but a pool's processes that live for a few
    milliseconds are seen.

    Between ``begin`` and ``lost``, every process seen is remembered with
    its parent: one that is gone by the end, and whose parent was neither
    the root nor still in the tree, was not reaped by a process whose CPU
    counters the worker reads (``concbench.run.run_figures``), so the batch's CPU
    is incomplete. A process whose parent is not the root has its context
    switches read at every sample: once its parent (a forkserver) reaps it,
    no counter the worker can read keeps them.
    """

    def __init__(self, root, exclude, partner=None):
        self.root = root
        self.exclude = exclude
        # The process that runs the reference's batches beside the worker's
        # (concbench.run.partner), forked from it: left out of the tree, but the
        # half of the pages it shares with the worker that its PSS holds is
        # the worker's, and counted as such.
        self.partner, self.partner_shared = partner, 0
        self.shared = {}        # pid -> RSS - PSS at its last PSS reading
        self.last_read = 0.0
        self.read_cost = 0.0
        self.rss_high = 0
        self.pids = []
        self.listed = 0.0
        self.list_cost = 0.0
        self.last_pid = None
        self.parents = {}       # pid -> parent, of every process seen
        self.switches = {}      # pid -> its switches, when not the root's child
        self.live = set()

    def begin(self):
        self.parents = {}
        self.switches = {}

    def reaped_switches(self):
        """Context switches, as last read, of the processes seen since
        ``begin`` that are gone and were reaped by a process still in the
        tree other than the root (whose reaped children's switches the
        worker reads itself)."""
        total = [0, 0]
        for pid, counts in self.switches.items():
            parent = self.parents.get(pid)
            if pid not in self.live and parent in self.live and parent != self.root:
                total = [a + b for a, b in zip(total, counts)]
        return total

    def lost(self):
        """How many processes seen since ``begin`` are gone without having
        been reaped by the root or a process still in the tree."""
        return sum(1 for pid, parent in self.parents.items()
                   if pid not in self.live and parent != self.root
                   and parent not in self.live)

    def sample(self, force=False):
        """(memory, threads, processes) of the tree now."""
        now = time.monotonic()
        last_pid = proc_files.last_pid()
        if (force or now - self.listed >= max(0.05, 100 * self.list_cost)
                or (last_pid != self.last_pid
                    and now - self.listed >= 10 * self.list_cost)):
            self.last_pid = last_pid
            self._list(now)
        rss, threads = self._read_rss()
        self.live = set(rss)
        self._read_new(rss)
        self._read_pss_if_due(rss, now, force)
        for pid in list(self.shared):
            if pid not in rss:
                del self.shared[pid]
        memory = sum(value - self.shared.get(pid, 0) for pid, value in rss.items())
        return memory + self.partner_shared, threads, len(rss)

    def _list(self, now):
        started = time.perf_counter()
        opened = set()
        self.pids = proc_files.tree(self.root, self.exclude, opened)
        proc_files.keep_open(opened | {"/proc/%d/stat" % pid for pid in self.pids})
        self.list_cost = time.perf_counter() - started
        self.listed = now

    def _read_rss(self):
        """Each listed process's RSS ({pid: bytes}), and their threads."""
        rss = {}
        threads = 0
        for pid in self.pids:
            try:
                rss[pid], count, parent = proc_files.stat(pid)
                # The root's own switches the worker reads itself.
                if parent != self.root and pid != self.root:
                    self.switches[pid] = proc_files.switches(pid)
            except (OSError, ValueError, IndexError):   # exited meanwhile
                continue
            self.parents[pid] = parent
            threads += count
        return rss, threads

    def _read_new(self, rss):
        """A new process is read at once, whatever the budget, and counted by
        the pages only it maps: the pages it shares (with the parent it was
        forked from) are already counted, in full, in the others' last PSS,
        which its arrival does not re-read. Its RSS would count a forked
        pool's shared pages again for every worker, its PSS in part twice
        (measured in 3736ff7: git show 3736ff7)."""
        for pid in rss:
            if pid not in self.shared:
                try:
                    self.shared[pid] = max(0, rss[pid] - proc_files.pss(pid, private=True))
                except OSError:
                    continue

    def _read_pss_if_due(self, rss, now, force):
        """Every process's PSS, when the tree grew or a second passed, within
        the budget."""
        total_rss = sum(rss.values())
        due = (force or total_rss > self.rss_high * RSS_GROWTH + MIB
               or now - self.last_read > 1.0)
        if not due or not (force or now - self.last_read >= 100 * self.read_cost):
            return
        started = time.perf_counter()
        for pid in list(rss):
            try:
                self.shared[pid] = max(0, rss[pid] - proc_files.pss(pid))
            except OSError:
                continue
        if self.partner:
            try:
                self.partner_shared = max(0, proc_files.pss(self.partner)
                                          - proc_files.pss(self.partner, private=True))
            except OSError:     # it ended
                self.partner_shared = 0
        self.read_cost = time.perf_counter() - started
        self.last_read = now
        self.rss_high = max(self.rss_high, total_rss)


def sample_tree_psutil(root, exclude, method):
    """Elsewhere than Linux (macOS): USS or RSS summed over the tree, through
    psutil."""
    import psutil
    memory = threads = processes = 0
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
        # A probe: raises where the USS cannot be read.
        psutil.Process(pid).memory_full_info().uss  # noqa: B018
        return "uss"
    except Exception:
        return "rss"



# The answer to "start" and "stop", one line: written here, read by
# concbench.run.run_figures.MemorySampler.

"""How much memory, how many threads and processes a process tree holds:
PSS summed over the tree from /proc on Linux (each shared page split
between the processes sharing it), psutil's figures elsewhere. Read by the
memory sampler (``concbench.run.sampler``), a process of its own."""

import os
import sys
import time

LINUX = sys.platform.startswith("linux")


def _children_linux(pid, read):
    """The children of every thread of ``pid``; ``read``: the set of the
    files read, to which theirs are added."""
    children = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return children
    for task in tasks:
        path = "/proc/%d/task/%s/children" % (pid, task)
        try:
            children.extend(int(c) for c in _read_proc(path, empty=True).split())
        except OSError:     # the thread ended meanwhile
            continue
        read.add(path)
    return children


PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


# Open /proc files, by path: the sampler reads the same few every 5-10 ms
# while a model runs, and what it costs the model is its CPU. Read again
# from the start, such a file says what it says now; opening and closing
# it each time cost several times the read (60 us a file on a
# free-threaded 3.13).
_open = {}


def _read_proc(path, empty=False):
    """The text of the /proc file ``path`` now (OSError when it is gone;
    an ``empty`` file, a thread's children, may say nothing)."""
    fd = _open.get(path)
    if fd is None:
        fd = _open[path] = os.open(path, os.O_RDONLY)
    try:
        data = os.pread(fd, 65536, 0)
        while len(data) % 65536 == 0 and data:    # a thread with many children
            more = os.pread(fd, 65536, len(data))
            if not more:
                break
            data += more
    except OSError:
        data = None
    if data == b"" and empty:
        return ""
    if not data:    # its process ended (or its pid now names another)
        del _open[path]
        os.close(fd)
        raise ProcessLookupError(path)
    return data.decode()


def _keep_open(paths):
    """Close the open /proc files but ``paths`` (those of the tree as last
    listed) and /proc/loadavg: a pool's processes and threads come and go
    with every batch."""
    for path in [path for path in _open
                 if path not in paths and path != "/proc/loadavg"]:
        os.close(_open.pop(path))


def _stat_linux(pid):
    """(resident bytes, threads, parent pid) from /proc/PID/stat: cheap,
    unlike PSS. A zombie (exited, not yet reaped) raises ProcessLookupError:
    it holds no memory and runs nothing, so it is not counted among the
    processes."""
    data = _read_proc("/proc/%d/stat" % pid)
    fields = data[data.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        raise ProcessLookupError(pid)
    # Fields 4 (ppid), 20 (num_threads) and 24 (rss, in pages), counted from 1.
    return int(fields[21]) * PAGE, int(fields[17]), int(fields[1])


def _switches_linux(pid):
    """(voluntary, involuntary) context switches of PID so far."""
    found = [0, 0]
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                found[0] = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                found[1] = int(line.split()[1])
    return found


def _last_pid():
    """The id the kernel gave the newest process or thread on the machine
    (/proc/loadavg's last field): when it has not changed, no process was
    created, so the tree need not be listed again. A few microseconds."""
    try:
        return _read_proc("/proc/loadavg").rsplit(None, 1)[-1]
    except OSError:
        return None


def _pss_linux(pid, private=False):
    """Proportional set size from /proc/PID/smaps_rollup (walks page tables);
    with ``private``, the pages no other process maps (USS) instead."""
    total = 0
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if private:
                if line.startswith(("Private_Clean:", "Private_Dirty:",
                                    "Private_Hugetlb:")):
                    total += int(line.split()[1]) * 1024
            elif line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return total


def _tree_linux(root, exclude, read=None):
    """``root`` and its descendants but ``exclude`` and theirs; ``read``:
    a set to which the files read are added."""
    read = set() if read is None else read
    pids, pending = [], [root]
    while pending:
        pid = pending.pop()
        if pid not in exclude:
            pids.append(pid)
            pending.extend(_children_linux(pid, read))
    return pids


class TreeMemory:
    """The process tree's PSS, estimated often and measured now and then.

    Reading PSS costs milliseconds per large process (the kernel walks its
    page tables), RSS microseconds. So every sample reads RSS and estimates
    each process's PSS as its RSS minus the shared part (RSS - PSS) found at
    its last PSS reading; a new process is read as soon as it appears and
    counted by its private pages (USS) until the next full reading, since
    the pages it shares are already in the others' figures; PSS is read for
    all of them when the tree's RSS grows 5% past its last high and at
    least every second, as often as a budget of 1% of the sampler's time
    allows.

    The tree is listed again at the first sample after any process or
    thread was created on the machine (``_last_pid``), within a budget of
    10% of the sampler's time, and at least every 50 ms: finding children
    means reading a file per thread, which adds up in a process with
    hundreds of threads, but a pool's processes that live for a few
    milliseconds are seen.

    Between ``begin`` and ``lost``, every process seen is remembered with
    its parent: one that is gone by the end, and whose parent was neither
    the root nor still in the tree, was not reaped by a process whose CPU
    counters the worker reads (``concbench.run.record``), so the batch's CPU
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
        last_pid = _last_pid()
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
        read = set()
        self.pids = _tree_linux(self.root, self.exclude, read)
        _keep_open(read | {"/proc/%d/stat" % pid for pid in self.pids})
        self.list_cost = time.perf_counter() - started
        self.listed = now

    def _read_rss(self):
        """Each listed process's RSS ({pid: bytes}), and their threads."""
        rss = {}
        threads = 0
        for pid in self.pids:
            try:
                rss[pid], count, parent = _stat_linux(pid)
                # The root's own switches the worker reads itself.
                if parent != self.root and pid != self.root:
                    self.switches[pid] = _switches_linux(pid)
            except (OSError, ValueError, IndexError):   # exited meanwhile
                continue
            self.parents[pid] = parent
            threads += count
        return rss, threads

    def _read_new(self, rss):
        """A new process is read at once, whatever the budget, and counted by
        the pages only it maps: the pages it shares (with the parent it was
        forked from) are already counted, in full, in the others' last PSS,
        which its arrival does not re-read. Counting its RSS instead made a
        pool of 128 forked workers 23 GiB for 1 GiB; its PSS, the shared
        pages twice."""
        for pid in rss:
            if pid not in self.shared:
                try:
                    self.shared[pid] = max(0, rss[pid] - _pss_linux(pid, private=True))
                except OSError:
                    continue

    def _read_pss_if_due(self, rss, now, force):
        """Every process's PSS, when the tree grew or a second passed, within
        the budget."""
        total_rss = sum(rss.values())
        due = (force or total_rss > self.rss_high * 1.05 + MIB
               or now - self.last_read > 1.0)
        if not due or not (force or now - self.last_read >= 100 * self.read_cost):
            return
        started = time.perf_counter()
        for pid in list(rss):
            try:
                self.shared[pid] = max(0, rss[pid] - _pss_linux(pid))
            except OSError:
                continue
        if self.partner:
            try:
                self.partner_shared = max(0, _pss_linux(self.partner)
                                          - _pss_linux(self.partner, private=True))
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
        psutil.Process(pid).memory_full_info().uss
        return "uss"
    except Exception:
        return "rss"



# The answer to "start" and "stop", one line: written here, read by
# concbench.run.record.Sampler.

"""What the memory sampler reads of /proc (Linux): a process's RSS, threads
and parent, its children, its context switches, its PSS. The sampler
(``concbench.run.memory_sampler``) reads the same few files every 5-10 ms while a
model runs, and what it spends is taken from a model that uses every CPU:
so the files it reads again are kept open and read from their start,
which says what they say now."""

import os

PAGE = os.sysconf("SC_PAGE_SIZE")


def children(pid, opened):
    """The children of every thread of ``pid``; ``opened``: the set of the
    files read, to which theirs are added."""
    found = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return found
    for task in tasks:
        path = "/proc/%d/task/%s/children" % (pid, task)
        try:
            found.extend(int(c) for c in read(path, empty=True).split())
        except OSError:     # the thread ended meanwhile
            continue
        opened.add(path)
    return found


# Open /proc files, by path: opening and closing one each time costs
# several times the read (measured in 3858184: git show 3858184).
_open = {}


def read(path, empty=False):
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


def keep_open(paths):
    """Close the open /proc files but ``paths`` (those of the tree as last
    listed) and /proc/loadavg: a pool's processes and threads come and go
    with every batch."""
    for path in [path for path in _open
                 if path not in paths and path != "/proc/loadavg"]:
        os.close(_open.pop(path))


def stat(pid):
    """(resident bytes, threads, parent pid) from /proc/PID/stat: cheap,
    unlike PSS. A zombie (exited, not yet reaped) raises ProcessLookupError:
    it holds no memory and runs nothing, so it is not counted among the
    processes."""
    data = read("/proc/%d/stat" % pid)
    fields = data[data.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        raise ProcessLookupError(pid)
    # Fields 4 (ppid), 20 (num_threads) and 24 (rss, in pages), counted from 1.
    return int(fields[21]) * PAGE, int(fields[17]), int(fields[1])


def switches(pid):
    """(voluntary, involuntary) context switches of PID so far."""
    found = [0, 0]
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                found[0] = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                found[1] = int(line.split()[1])
    return found


def last_pid():
    """The id the kernel gave the newest process or thread on the machine
    (/proc/loadavg's last field): when it has not changed, no process was
    created, so the tree need not be listed again. One read of a file kept
    open."""
    try:
        return read("/proc/loadavg").rsplit(None, 1)[-1]
    except OSError:
        return None


def pss(pid, private=False):
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


def tree(root, exclude, opened=None):
    """``root`` and its descendants but ``exclude`` and theirs; ``opened``:
    a set to which the files read are added."""
    opened = set() if opened is None else opened
    pids, pending = [], [root]
    while pending:
        pid = pending.pop()
        if pid not in exclude:
            pids.append(pid)
            pending.extend(children(pid, opened))
    return pids

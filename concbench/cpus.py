"""The CPUs this run may use: its affinity set, capped by a cgroup CPU quota.

``os.cpu_count()`` counts the host's logical CPUs; ``os.sched_getaffinity``
(and 3.13's ``os.process_cpu_count()``) the affinity set; none reads the CPU
quota of a container (``docker run --cpus``, a Kubernetes CPU limit, a
systemd ``CPUQuota``), which CPython issue 149452 asks for. Here the usable
count is the affinity set capped by the smallest quota of the process's own
cgroup and its parents, rounded up as GNU ``nproc`` rounds it: cgroup v2's
``cpu.max`` ("max 100000", "150000 100000") or v1's ``cpu.cfs_quota_us`` /
``cpu.cfs_period_us`` (-1: none).

The master reads it once, before any pinning narrows a worker (pyperf's
``--affinity`` and the pairing's own pinning apply to workers only), and
passes it to its workers in ``--usable-cpus`` (``encode``, ``decode``). A
cgroup file that cannot be read or parsed leaves the affinity set as the
count, with the reason in ``note``: it never stops a run.
"""

import json
import math
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Cpus:
    logical: int                    # os.cpu_count(): the machine's logical CPUs
    affinity: int                   # CPUs of the affinity set
    quota: float | None = None   # the cgroup quota in CPUs, None: none
    physical: int | None = None  # physical cores (psutil), None: unknown
    note: str = ""                  # why a quota could not be read

    @property
    def usable(self):
        """The CPUs this run may use at once: at least 1."""
        count = self.affinity
        if self.quota is not None:
            count = min(count, math.ceil(self.quota - 1e-9))
        return max(1, count)

    def limited_by(self):
        """What makes the usable count fewer than the logical CPUs:
        ["affinity"], ["quota"], both, or []."""
        why = []
        if self.affinity < self.logical:
            why.append("affinity")
        if self.quota is not None and math.ceil(self.quota - 1e-9) < self.affinity:
            why.append("quota")
        return why

    def describe(self):
        """``2 logical CPUs, 1 usable (affinity)``, as the report's header says it."""
        text = "%d logical CPU%s" % (self.logical, "" if self.logical == 1 else "s")
        if self.physical:
            text += " (%d physical core%s)" % (self.physical, "" if self.physical == 1 else "s")
        why = self.limited_by()
        text += ", %d usable" % self.usable
        if why:
            text += " (%s)" % ", ".join(
                "quota %g CPU%s" % (self.quota, "" if self.quota == 1 else "s")
                if reason == "quota" else reason
                for reason in why)
        return text


def encode(cpus):
    """What the master passes to its workers: its ``Cpus`` as JSON."""
    return json.dumps([cpus.logical, cpus.affinity, cpus.quota, cpus.physical, cpus.note])


def decode(text):
    """The ``Cpus`` of ``encode``'s text (ValueError if it is not one)."""
    logical, affinity, quota, physical, note = json.loads(text)
    return Cpus(int(logical), int(affinity), None if quota is None else float(quota),
                None if physical is None else int(physical), str(note))


def whole(value):
    """``value`` if it is a whole number of CPUs (1 or more), else None:
    a file's metadata is read as data from anyone."""
    return value if type(value) is int and 0 < value < 1 << 20 else None


def from_metadata(meta):
    """The ``Cpus`` a bench.py file recorded (``concbench.schema``), or None
    for a file from before they were recorded, or whose counts are not
    whole numbers."""
    from concbench import schema

    logical, affinity = whole(meta.get("cpu_count")), whole(meta.get(schema.CPUS_AFFINITY))
    if logical is None or affinity is None or whole(meta.get(schema.CPUS_USABLE)) is None:
        return None
    quota = meta.get(schema.CPU_QUOTA)
    if not (type(quota) in (int, float) and 0 < quota < 1 << 20):
        quota = None
    return Cpus(logical, affinity, quota, whole(meta.get(schema.CPU_CORES)))


def detect(root="/"):
    """This process's ``Cpus``. ``root`` stands for ``/`` in the tests,
    which write the cgroup and proc files of the machines they describe."""
    logical = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        affinity = len(os.sched_getaffinity(0)) or logical
    else:
        affinity = logical
    try:
        quota, note = cgroup_quota(root)
    except (OSError, ValueError, IndexError) as exc:
        quota, note = None, "cgroup quota not read (%s): the affinity set counts" % (
            exc.__class__.__name__ + (": %s" % exc if str(exc) else ""))
    return Cpus(logical, affinity, quota, physical_cores(), note)


def physical_cores():
    try:
        import psutil
    except ImportError:
        return None
    try:
        return psutil.cpu_count(logical=False) or None
    except Exception:       # psutil cannot tell on some platforms
        return None


# -- cgroups ------------------------------------------------------------------

def cgroup_quota(root="/"):
    """(the smallest CPU quota of this process's cgroups and their parents,
    in CPUs, or None; a note). Not Linux, or no cgroup: (None, "")."""
    own = os.path.join(root, "proc/self/cgroup")
    if not os.path.exists(own):
        return None, ""
    with open(own, encoding="utf-8") as file:
        memberships = [line.rstrip("\n").split(":", 2) for line in file if line.strip()]
    mounts = cgroup_mounts(root)
    quotas = []
    for _, controllers, path in memberships:
        names = controllers.split(",") if controllers else []
        if not controllers:             # v2: the unified hierarchy
            mount = mounts.get("cgroup2")
            read = read_cpu_max
        elif "cpu" in names:
            mount = mounts.get("cpu")
            read = read_cfs
        else:
            continue
        if mount is None:
            continue
        for folder in cgroup_folders(root, mount, path):
            quota = read(folder)
            if quota is not None:
                quotas.append(quota)
    return (min(quotas) if quotas else None), ""


def cgroup_mounts(root):
    """{"cgroup2" or "cpu": (mount root, mount point)} from mountinfo."""
    found = {}
    path = os.path.join(root, "proc/self/mountinfo")
    if not os.path.exists(path):
        return found
    with open(path, encoding="utf-8") as file:
        for line in file:
            fields = line.split()
            if "-" not in fields:
                continue
            dash = fields.index("-")
            fstype, options = fields[dash + 1], fields[dash + 3:dash + 4]
            if fstype == "cgroup2":
                found.setdefault("cgroup2", (fields[3], fields[4]))
            elif fstype == "cgroup" and options and "cpu" in options[0].split(","):
                found.setdefault("cpu", (fields[3], fields[4]))
    return found


def cgroup_folders(root, mount, path):
    """The folders of cgroup ``path`` and of its parents up to the mount,
    the cgroup's own first. A path outside the mount's root (a container's
    namespace shows its own cgroup as /) counts from the mount point."""
    mount_root, point = mount
    relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
    parts = [] if relative in (".", "") or relative.startswith("..") \
        else relative.split("/")
    base = os.path.join(root, point.lstrip("/"))
    return [os.path.join(base, *parts[:depth]) for depth in range(len(parts), -1, -1)]


def read_cpu_max(folder):
    """cgroup v2: ``cpu.max`` as CPUs, None for "max" or no file."""
    path = os.path.join(folder, "cpu.max")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as file:
        fields = file.read().split()
    if not fields:
        raise ValueError("%s is empty" % path)
    if fields[0] == "max":
        return None
    period = float(fields[1]) if len(fields) > 1 else 100000.0
    return positive_quota(float(fields[0]), period, path)


def read_cfs(folder):
    """cgroup v1: ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` as CPUs, None
    for -1 or no file."""
    path = os.path.join(folder, "cpu.cfs_quota_us")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as file:
        quota = int(file.read().strip())
    if quota < 0:
        return None
    with open(os.path.join(folder, "cpu.cfs_period_us"), encoding="utf-8") as file:
        period = int(file.read().strip())
    return positive_quota(quota, period, path)


def positive_quota(quota, period, path):
    if not (quota > 0 and period > 0) or math.isinf(quota) or math.isinf(period):
        raise ValueError("%s: quota %r over period %r" % (path, quota, period))
    return quota / period

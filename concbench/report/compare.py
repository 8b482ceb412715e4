"""Several files side by side: each benchmark's change against the first
file with an unpaired interval (two files' rounds are independent), each
file's best model, and pyperf's own comparison."""

import subprocess
import sys

from concbench import schema as K
from concbench.analysis.unpaired import not_comparable, unpaired_ratio

from .load import ReportError
from concbench.analysis.race import Race

def change(ratio):
    """'1.25x slower [1.10-1.42]' style text for a ratio other / reference."""
    def slower(value):
        return value if ratio.point >= 1 else 1 / value
    text = "%.2fx %s" % (slower(ratio.point), "slower" if ratio.point >= 1 else "faster")
    if ratio.low is not None:
        low, high = sorted((slower(ratio.low), slower(ratio.high)))
        text += " [%.2f-%.2f]" % (low, high)
    return text


def significance(ratio):
    """None with too few values to tell, else whether the interval clears 1."""
    if ratio is None or ratio.low is None:
        return None
    return not ratio.includes_one()


def describe_change(text, significant):
    if text is None:
        return ""
    if significant is None:
        return "%s (too few values to tell)" % text
    return text if significant else "%s (not significant)" % text


def records(paths, groups):
    """Per benchmark (in first-seen order), each file's entry; ``groups``:
    each file's rows by workload."""
    per_file = [{r.name: r for rows in g.values() for r in rows} for g in groups]
    names = []
    for rows in per_file:
        names.extend(n for n in rows if n not in names)
    found = []
    for name in names:
        present = [rows.get(name) for rows in per_file]
        ref = present[0]
        record = {"benchmark": name, "files": [],
                  K.WORKLOAD: next(r for r in present if r is not None).workload}
        for path, row in zip(paths, present):
            entry = {"file": path}
            if row is not None:
                entry.update(mean_s=row.mean, stdev_s=row.stdev, mem_peak_bytes=row.mem_peak,
                             mem_peak_source=row.mem_source, unit=row.unit)
                if ref is not None and row is not ref:
                    entry.update(file_change(row, ref))
            record["files"].append(entry)
        found.append(record)
    return found


def file_change(row, ref):
    """A row's change against the first file's row of the same benchmark."""
    differs = not_comparable(row, ref)
    if differs:
        return {"not_comparable": differs}
    # Runs of two files are not paired: each file's per-round values form
    # one sample.
    ratio = unpaired_ratio(list(row.by_round.values()), list(ref.by_round.values()))
    entry = dict(time_change=change(ratio), time_ratio=ratio.point,
                 time_ci_low=ratio.low, time_ci_high=ratio.high,
                 time_significant=significance(ratio))
    # Two figures of memory compare only if they are the same figure.
    memory = (unpaired_ratio(row.mem_peaks, ref.mem_peaks)
              if row.mem_source == ref.mem_source else None)
    if row.mem_source and ref.mem_source and row.mem_source != ref.mem_source:
        entry["mem_not_comparable"] = "%s against %s" % (row.mem_source, ref.mem_source)
    if memory is not None:
        entry.update(
            mem_change_pct=(memory.point - 1) * 100,
            mem_change_ci_pct=None if memory.low is None else
            [(memory.low - 1) * 100, (memory.high - 1) * 100],
            mem_significant=significance(memory))
    return entry


def best_per_file(paths, groups):
    """{workload of bench.py's: {file: {"answered": whether the race is answered,
    "leader": the model that leads, "models": the models the answer names
    (the leader and those not shown slower)}}}."""
    best = {}
    for path, by_workload in zip(paths, groups):
        for workload, rows in by_workload.items():
            ours = [r for r in rows if r.ours]
            if not ours:
                # Benchmarks of plain pyperf (a pyperformance suite) are
                # unrelated to each other: none of them is a "best".
                continue
            race = Race(ours)
            best.setdefault(workload, {})[path] = {
                "answered": race.answered, "leader": race.leader.model,
                "models": [r.model for r in race.named()]}
    return best


def compare_to_table(paths):
    """pyperf's own comparison, as pyperf prints it."""
    proc = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", "--table"]
                          + list(paths), capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReportError("pyperf compare_to failed: %s"
                          % " ".join(proc.stderr.split())[:500])
    return proc.stdout.rstrip("\n") + "\n"

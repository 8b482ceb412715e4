"""What a file says of the machine and the run: the header's facts, the
noise floor, the GIL state of its runs."""

import statistics

from concbench import cpus
from concbench.analysis import ceiling
from concbench import schema as K
from concbench.analysis.controls import control_lines
from concbench.rules import (ALPHA_TEXT, BAND_TEXT, FASTER, LEVEL_TEXT, SAME, SLOWER,
                             UNDECIDED, VERDICTS)
from concbench.analysis.runs import gil_runs, usual_gil
from concbench.analysis.stats import imprecise, quantile
from concbench.formatting import count, format_time

from .verdicts import no_fit_line


def noise_floor(suite):
    """(variation across rounds, spread between runs) of the machine probe
    that precedes every batch, as shares; None without probes. The spread
    between runs (90th against 10th percentile) is what a paired ratio of two
    benchmarks' runs can be off by: below it, a difference is a tie."""
    by_round = {}
    probes = []
    for bench in suite.get_benchmarks():
        for position, run in enumerate(bench.get_runs()):
            meta = run.get_metadata()
            if K.PROBE_S in meta and run.values:
                probes.append(meta[K.PROBE_S])
                by_round.setdefault(meta.get(K.ROUND, position), []).append(meta[K.PROBE_S])
    if len(probes) < 2:
        return None
    medians = [statistics.median(values) for values in by_round.values()]
    return (max(medians) / min(medians) - 1,
            quantile(probes, 0.9) / quantile(probes, 0.1) - 1)


def gil_state(suite):
    """One line: the GIL state the runs recorded."""
    states, by = gil_runs(suite)
    if not states:
        return ""
    enabled = states.count("yes")
    if enabled == len(states):
        text = "enabled in every run"
    elif not enabled:
        text = "disabled in every run"
    else:
        text = "enabled in %d of %d runs" % (enabled, len(states))
    usual = usual_gil(suite)
    if any(state != usual for state in states):
        text += " (expected %s: flagged gil)" % ("on" if usual == "yes" else "off")
    if by:
        text += "; re-enabled by importing %s" % ", ".join(by)
    return text


def cpu_line(meta):
    """The CPU model and the CPUs the run could use: ``..., 2 logical CPUs
    (2 physical cores), 1 usable (affinity)``; what the worker counts were
    sized for where --cpus changed it."""
    model = meta.get("cpu_model_name", "?")
    machine = cpus.from_metadata(meta)
    if machine is None:
        # A file from before the usable count was recorded: its ideal
        # divides by the logical CPUs, as it did then.
        return ("%s, %s logical CPUs (ideal from all: no usable count recorded)"
                % (model, meta.get("cpu_count", "?")))
    line = "%s, %s" % (model, machine.describe())
    sized = cpus.whole(meta.get(K.CPUS_SIZED_FOR))
    if sized and sized != machine.usable:
        line += "; worker counts sized for %d (--cpus)" % sized
    return line


def ceiling_lines(suite):
    """The machine's own speedup at each rung it ran (``concbench.analysis.ceiling``),
    one line a family."""
    return ["ceiling: %s (the machine's own: N copies of one fixed loop at once, "
            "against one)" % ceiling.describe(family, rungs)
            for family, rungs in ceiling.rungs_of(suite).items()]


def first_of_each_key(suite):
    """Each metadata key from the first benchmark (in the file's order)
    whose first run has it: a pyperformance file's 61 benchmarks do not all
    record the Python version, nor does its first."""
    found = {}
    for bench in suite.get_benchmarks():
        runs = bench.get_runs()
        if runs:
            for key, value in runs[0].get_metadata().items():
                found.setdefault(key, value)
    return found


def header_lines(files):
    """``files``: (path, suite, rows by workload, control rows by workload)
    of each file."""
    lines = []
    for path, suite, groups, controls in files:
        meta = dict(first_of_each_key(suite), **suite.get_metadata())
        gil = meta.get(K.GIL)
        build = ("free-threaded build, GIL %s" % gil
                 if meta.get(K.FREE_THREADED_BUILD) == "yes"
                 else "GIL build" if gil else "")
        python = " ".join(x for x in (meta.get("python_implementation", ""),
                                      meta.get("python_version", ""), build) if x)
        libs = ", ".join("%s %s" % (name, meta[K.version_key(name)])
                         for name in ("pyperf", "Pillow", "uvloop", "psutil")
                         if K.version_key(name) in meta)
        lines.append("%s: %s" % (path, python or "(no Python version recorded)"))
        details = [("platform", meta.get("platform")),
                   ("CPU", cpu_line(meta)),
                   ("libraries", libs),
                   (K.PRESET, meta.get(K.PRESET)),
                   ("harness without", meta.get(K.HARNESS_WITHOUT)),
                   (K.SCENARIO, meta.get(K.SCENARIO)),
                   ("scaled", meta.get(K.SCENARIO_SCALED)),
                   ("date", meta.get("date"))]
        for label, value in details:
            if value:
                lines.append("  %s: %s" % (label, value))
        lines.extend("  " + line for line in ceiling_lines(suite))
        noise = noise_floor(suite)
        if noise:
            lines.append("  noise: machine speed varied %.0f%% across rounds and "
                         "%.0f%% between runs (a fixed probe before every batch); "
                         "speedups pair each model's batches with the "
                         "reference's, and their intervals carry what remains"
                         % (noise[0] * 100, noise[1] * 100))
        lines.extend("  " + line for line in pairing_lines(groups))
        lines.extend("  " + line for line in decided_lines(groups, meta))
        lines.extend("  " + line for line in question_lines(groups, controls, meta, suite))
        lines.extend("  " + line for line in control_lines(groups, controls))
        lines.extend("  " + line for line in no_fit_line(groups))
        state = gil_state(suite)
        if state:
            lines.append("  GIL: " + state)
        order = meta.get(K.ORDER)
        if order:
            lines.append("  order: %s%s" % (
                "interleaved rounds" if order == "interleaved" else "pyperf's",
                " (seed %s)" % meta[K.ORDER_SEED] if K.ORDER_SEED in meta else ""))
    return lines


def pairing_lines(groups):
    """How each workload's speedups were paired, and how far apart in time
    the paired batches ran (the median over its rows)."""
    ways = {}
    for name, rows in groups.items():
        paired = [r for r in rows if r.ratio is not None]
        if not paired:
            continue
        how = "in the worker" if paired[0].pairing == "worker" else "by round"
        gaps = [r.gap for r in paired if r.gap is not None]
        ways.setdefault(how, []).append((name, statistics.median(gaps) if gaps else None))
    if not ways:
        return []
    overhead = [name for name, rows in groups.items()
                if any(r.meta.get(K.PAIRED_WITH) for r in rows)]
    if overhead:
        return ["paired with: each model's batches recorded against the same model's "
                "unrecorded (--latency-overhead) in %s: a speedup there is what "
                "recording latencies costs (below 1: recording is slower)"
                % ", ".join(overhead)]
    parts = []
    for how, found in ways.items():
        gaps = [gap for _, gap in found if gap is not None]
        parts.append("%s for %s%s" % (how, ", ".join(name for name, _ in found),
                                      " (paired batches %s apart)" % format_time(
                                          statistics.median(gaps)) if gaps else ""))
    return ["pairing: " + "; ".join(parts)]


def decided_lines(groups, meta):
    """How many rows the run decided (and made precise, under --precision),
    and what error the verdicts keep."""
    rows = [r for group in groups.values() for r in group if r.verdict is not None]
    if not rows:
        return []
    counts = {name: sum(1 for r in rows if r.verdict == name)
              for name in VERDICTS}
    rounds = [len(r.round_ratios()) for r in rows]
    lines = ["decided: %d of %d speedups (%d faster, %d slower, %d the same "
             "within %s), %s rounds each" % (
                 len(rows) - counts[UNDECIDED], len(rows), counts[FASTER],
                 counts[SLOWER], counts[SAME], BAND_TEXT,
                 "%d" % rounds[0] if min(rounds) == max(rounds)
                 else "%d-%d" % (min(rounds), max(rounds))),
             "verdicts: by %s confidence sequences, valid whenever the run "
             "stopped; each verdict is wrong with at most %s chance on its own, "
             "not across the %d (of rows that truly do not differ, up to %s may "
             "read faster or slower); the winners a takeaway names hold with "
             "%s together" % (LEVEL_TEXT, ALPHA_TEXT, len(rows), ALPHA_TEXT, LEVEL_TEXT)]
    target = meta.get(K.PRECISION_TARGET_PCT)
    if target:
        within = sum(1 for r in rows if not imprecise(r.ratio, target))
        lines.append("precision: %d of %d speedups within +-%g%% (the target)"
                     % (within, len(rows), target))
    return lines


def question_lines(groups, controls, meta, suite=None):
    """Which of the takeaways' questions the run answered, after how many
    rounds (with ``suite``, the file they were read from), and which are
    still open (``concbench.analysis.questions``: what bench.py spent its
    rounds on); none under --precision, which asks only for the rows."""
    from concbench.analysis.questions import all_questions, answered_after

    if meta.get(K.PRECISION_TARGET_PCT):
        return []
    found = [q for q in all_questions(groups, controls) if q.kind not in ("row", "control")]
    if not found:
        return []
    when = answered_after(suite, found) if suite is not None else {}
    topics = {}
    for question in found:
        topics.setdefault(question.topic, []).append(question)
    parts = []
    for topic, asked in topics.items():
        answered = [q for q in asked if q.answered]
        said = ["%s after %s" % (q.workload, count(when[q.label], "rounds"))
                for q in answered if q.label in when]
        if len(answered) < len(asked):
            said.append("open: %s" % ", ".join(q.workload for q in asked if not q.answered))
        parts.append("%s in %d of %s%s" % (
            topic, len(answered), count(len(asked), "workloads"),
            " (%s)" % "; ".join(said) if said else ""))
    return ["answered: " + "; ".join(parts)]


def workload_params(rows):
    """The workload's own one-line description of its parameters."""
    return rows[0].meta.get(K.WORKLOAD_PARAMS, "") if rows[0].ours else ""

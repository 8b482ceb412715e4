"""What the rows say in words: winners and ties, takeaways, and how far
two files agree.

Whether a question is answered is decided in ``concbench.analysis.questions``, the
same way the run decides which rounds to add: a takeaway that picks a
winner rests on paired comparisons of the rows concerned, on the rounds
both ran, by the same interval as the verdicts (valid whenever the run
stopped), each at 95% / their number (Bonferroni), so that the takeaway as
a whole holds with 95%. Two rows are never told apart by whether their
intervals against the reference overlap.
"""

import math
import statistics

from concbench import schema as K
from concbench.analysis.anytime import first_bounded
from concbench.analysis.questions import scaling_groups, series_of
from concbench.analysis.rows import ideal_cpus
from concbench.analysis.scaling import LEAST_RUNGS, SIGMA_BOX, family_fits, on_gil
from concbench.analysis.steps import helping
from concbench.analysis.race import Race
from concbench.thresholds import AGREE
from concbench.rules import (ALPHA, BAND_TEXT, LEVEL_TEXT, SAME, SLOWER, UNDECIDED, WITHIN,
                             split)
from concbench.formatting import count, format_time as fmt_time

# How a race's answers word the band.
SAME_WITHIN = "the same within %s" % BAND_TEXT
NONE_FASTER = "none more than %s faster" % BAND_TEXT

# An undecided row after this many rounds is named with its per-round
# spread, which is what keeps it open.
WIDE_AFTER = 10


def winners(rows):
    """(the fastest row, [(row, its ratio against the fastest)] for every
    other row not shown slower than it, in file order): the race of
    ``concbench.analysis.questions``."""
    race = Race(rows)
    return race.leader, race.tied()


def winner_line(topic, race, name, details):
    """"fastest: asyncio (115 ms, 3.00x sequential)"; the tie when every
    other row not shown slower is the same within the band; an answer that
    names the rows not told apart, none of which can be more than the band
    faster; else which row leads, which rows still hold the race open
    (their time over its with a lower end below the band's, or no interval
    yet: too few shared rounds), and which are already shown no more than
    the band faster."""
    best, comparisons = race.leader, race.comparisons
    tied = sorted(((row, ratio, state) for row, ratio, state in race.entries
                   if state != SLOWER), key=lambda entry: entry[0].position)
    if not tied:
        return "%s: %s (%s)" % (topic, name(best), details)
    if all(state == SAME for _, _, state in tied):
        if len(tied) > 1:
            # Each was compared with the leader, not with each other: two of
            # them may differ by up to twice the band.
            return "%s: %s (%s); each %s of it: %s" % (
                topic, name(best), details, SAME_WITHIN, ", ".join(name(r) for r, _, _ in tied))
        together = sorted([best] + [row for row, _, _ in tied], key=lambda r: r.position)
        return "%s: %s: %s (%s)" % (
            topic, ", ".join(name(r) for r in together), SAME_WITHIN, details)
    if race.answered:
        return "%s: %s (%s); not told apart from it, %s: %s" % (
            topic, name(best), details, NONE_FASTER, ", ".join(
                "%s (%s)" % (name(r), SAME_WITHIN if state == SAME
                             else against_leader(ratio))
                for r, ratio, state in tied))
    # What holds the race open (a row whose lower end is below the band's,
    # or that has no interval yet) apart from the rows already shown no
    # more than the band faster, which need nothing more: "not told apart" would read
    # as open for a row far slower whose interval is only wide.
    kinds = {"same": [], "within": [], "close": [], "open": []}
    for row, ratio, state in tied:
        kind = ("open" if ratio is None or ratio.low is None
                else "same" if state == SAME else "within" if state == WITHIN
                else "close")
        kinds[kind].append((row, ratio))
    parts = []
    if kinds["close"]:
        parts.append("not told apart from it in %s: %s" % (
            shared(kinds["close"]), ", ".join(name(r) for r, _ in kinds["close"])))
    if kinds["same"]:
        parts.append("%s of it: %s" % (SAME_WITHIN, ", ".join(name(r) for r, _ in kinds["same"])))
    if kinds["within"]:
        parts.append("%s: %s" % (NONE_FASTER, ", ".join(
            "%s (%s)" % (name(r), against_leader(ratio)) for r, ratio in kinds["within"])))
    if kinds["open"]:
        parts.append("no interval yet against %s (%s; %d needed at %s over %s)" % (
            ", ".join(name(r) for r, _ in kinds["open"]), shared(kinds["open"]),
            first_bounded(race.interval_alpha), LEVEL_TEXT, count(comparisons, "comparisons")))
    return "%s: undecided; %s leads (%s); %s" % (topic, name(best), details,
                                                 "; ".join(parts))


def against_leader(ratio):
    """'2.37x its time [0.96-5.85]': a row not told apart from the leader
    may still be far slower by its point, its interval wide; the words
    say how far it is from being shown slower."""
    return "%.2fx its time [%.2f-%.2f]" % (ratio.point, ratio.low, ratio.high)


def shared(tied):
    """'4 shared rounds', or '3-5 shared rounds'; with the workers of those
    run beside the leader: '3-5 shared rounds, 4 workers side by side'."""
    def spread(counts, unit):
        counts = sorted(counts)
        text = "%d" % counts[0] if counts[0] == counts[-1] else "%d-%d" % (
            counts[0], counts[-1])
        return "%s %s%s" % (text, unit, "" if text == "1" else "s")
    found = spread([ratio.rounds if ratio else 0 for _, ratio in tied], "shared round")
    side = [ratio.side.rounds for _, ratio in tied if ratio and ratio.side]
    return found + (", %s side by side" % spread(side, "worker") if side else "")


def takeaways(rows, control=None):
    """A few sentences derived from the rows of one workload (``control``:
    its A/A control's row, whose spread tells the machine's from a model's)."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return []
    lines = []
    race = Race(ours)
    best = race.leader
    details = fmt_time(best.mean)
    if best.speedup:
        details += ", %.2fx %s" % (best.speedup, best.meta.get(K.REFERENCE_MODEL,
                                                                "the reference"))
    lines.append(winner_line("fastest", race, lambda r: r.model, details))
    for counted, members in scaling_groups(ours).items():
        lines.extend(scaling_takeaways(counted, members))
        lines.extend(shape_lines(counted, members))
    bad = [r for r in ours if "failures" in r.flags or "check" in r.flags]
    if bad:
        lines.append("failures or failed checks: " + ", ".join(
            "%s (%s)" % (r.model, r.failures or "check") for r in bad))
    bound = [r.model for r in ours if "server-bound" in r.flags]
    if bound:
        lines.append("server-bound (the server, not the model, set the pace): "
                     + ", ".join(bound))
    lines.extend(wide_lines(ours, control))
    incomplete = [r.model for r in ours if "cpu-incomplete" in r.flags]
    if incomplete:
        lines.append("cpu-incomplete: %s saw a process exit that no process "
                     "whose CPU is read had reaped; its CPU figures are low and "
                     "left out of the ideal" % ", ".join(incomplete))
    source = next((r for r in ours if r.ideal_from), None)
    if source and ours[0].meta.get(K.WORKLOAD_KIND) == "cpu":
        if source.ideal_from_time:
            lines.append("ideal: from the reference's time (%s's; no model's CPU "
                         "figures)" % source.ideal_from)
        else:
            lines.append("ideal: from the least CPU per item of any model (%s's)"
                         % source.ideal_from)
    above = [r.model for r in ours if "above-ideal" in r.flags]
    if above:
        lines.append("above-ideal: %s ran faster than the ideal made from the "
                     "least CPU per item any model used; CPU is read just "
                     "outside the timed region, so for short batches that "
                     "least CPU is not a bound" % ", ".join(above))
    return lines


def wide_lines(ours, control):
    """Rows still undecided after WIDE_AFTER rounds, with their per-round
    spread: called the model's own only where it is wider than the A/A
    control's, which measures the machine's (each row at 95% / the rows
    named, so that a workload of identical code draws the line with 5%
    chance at most); else the machine's."""
    wide = [r for r in ours if r.verdict == UNDECIDED
            and len(r.round_ratios()) >= WIDE_AFTER]
    if not wide:
        return []
    machine = spread(control)
    own = [r for r in wide if machine is not None and wider(r, control, len(wide))]
    lines = []
    for found, whose in ((own, "the model's own (wider than the A/A control's, "
                                "%.2f)" % machine if machine is not None else ""),
                         ([r for r in wide if r not in own],
                          "the machine's: the A/A control's rounds spread by %.2f"
                          % machine if machine is not None else
                          "the machine's or the model's (no A/A control to tell)")):
        if found:
            lines.append("still undecided after %d rounds or more, the spread is "
                         "%s: %s" % (WIDE_AFTER, whose, ", ".join(
                             "%s (per-round speedup %.2fx-%.2fx over %d rounds, "
                             "spread %.2f)" % (r.model, min(r.round_ratios()),
                                               max(r.round_ratios()),
                                               len(r.round_ratios()), spread(r))
                             for r in found)))
    return lines


def wider(row, control, rows=1):
    """Whether a row's rounds spread more than the control's, one-sided at
    95% / ``rows``: the Brown-Forsythe test, a t on each one's absolute
    deviations from its median (normal quantile). A round's value is the
    median of a worker's pairs, and where the CPU's speed jumps between the
    two batches of some pairs, those values are heavy-tailed, and a normal
    approximation of Fisher's F on their variances, one row at a time,
    called copies of identical code wider than the control far more often
    than its level allows (measured in 1fbc0a0: git show 1fbc0a0;
    tests/test_control.py holds the test to its level)."""
    mine, theirs = row.round_ratios(), control.round_ratios()
    if len(mine) < 3 or len(theirs) < 3 or not spread(control):
        return False
    gaps = [_deviations([math.log(x) for x in values]) for values in (mine, theirs)]
    difference = statistics.fmean(gaps[0]) - statistics.fmean(gaps[1])
    error = math.sqrt(sum(statistics.variance(g) / len(g) for g in gaps))
    if error == 0:
        return difference > 0
    return difference / error > statistics.NormalDist().inv_cdf(1 - split(ALPHA, rows))


def _deviations(logs):
    middle = statistics.median(logs)
    return [abs(x - middle) for x in logs]


def spread(row):
    """The standard deviation of a row's per-round log speedups (None
    without two rounds)."""
    if row is None or len(row.round_ratios()) < 2:
        return None
    return statistics.stdev(math.log(x) for x in row.round_ratios())


def scaling_takeaways(counted, members):
    """The best worker count of a series, and where more stopped helping."""
    race = Race(members)
    best = race.leader
    counts = [r.workers() for r in [best] + [row for row, _ in race.tied()]]
    # Two series (chunk sizes) can tie at one count: name the models.
    name = ((lambda r: str(r.workers())) if len(set(counts)) == len(counts)
            else (lambda r: r.model))
    details = fmt_time(best.mean)
    if name(best) != best.model:
        details = "%s, %s" % (best.model, details)
    lines = [winner_line("best %s count" % best.meta[K.SCALING_UNIT], race,
                         name, details)]
    for label, rows_of in series_of(members):
        found = helping(rows_of)
        if found is None:
            continue
        state, current, following, ratio = found
        where = " (%s)" % label if label else ""
        if state == "stopped":
            lines.append("more %s stopped helping after %d%s" % (
                counted, current.workers(), where))
        else:
            lines.append("more %s: undecided after %d%s (%d to %d: %s)" % (
                counted, current.workers(), where, current.workers(),
                following.workers(), describe_saving(ratio)))
    return lines


def shape_lines(counted, members):
    """Each series' fit of Amdahl's law and the USL (``analysis.scaling``);
    the header says where a file has none (``no_fit_line``)."""
    return [shape_line(counted, label, series, fit)
            for label, series, fit in fits_of(members)]


def fits_of(members):
    """[(series label, rows, Fit)] of one family's rows, on the CPUs the
    run could use."""
    if not cpu_bound(members):
        return []
    reference = next((r.reference for r in members if r.reference is not None), None)
    return family_fits(members, ideal_cpus(members[0].meta), reference)


def cpu_bound(members):
    """Whether the family's curve is one of cores: a CPU workload's (an IO
    workload's counts follow its concurrency)."""
    return members[0].meta.get(K.WORKLOAD_KIND) == "cpu"


def no_fit_line(groups):
    """One line where no series of the file has a fit, and it has series:
    why (a fit needs LEAST_RUNGS worker counts on the usable CPUs)."""
    families = [(counted, members) for rows in groups.values()
                for counted, members in scaling_groups([r for r in rows if r.ours]).items()
                if cpu_bound(members)]
    if not families or any(fits_of(members) for _, members in families):
        return []
    cpus = ideal_cpus(families[0][1][0].meta)
    return ["curves: no fit of Amdahl's law or the USL: no series has %d worker counts "
            "with a speedup at or below the %s (1, or the reference, counted)"
            % (LEAST_RUNGS, count(cpus, "usable CPUs"))]


def shape_line(counted, label, series, fit):
    """"processes (chunk 125): serial fraction 0.04 [0.02-0.07], peak
    predicted past 64 (USL on 1-64 ...)"."""
    name = "%s (%s)" % (counted, label) if label else counted
    where = "%d-%d" % (min(fit.counts), fit.top)
    if not fit.consistent:
        return ("%s: its curve follows neither Amdahl's law nor the USL (of serial "
                "fraction %g to %g) through its rungs' %s intervals on %s"
                % ((name,) + SIGMA_BOX + (LEVEL_TEXT, where)))
    text = "%s: serial fraction %s" % (name, fraction(fit.sigma))
    if fit.sigma_low is not None:
        text += " [%s%s%s]" % (fraction(fit.sigma_low), " to " if fit.sigma_low < 0 else "-",
                               fraction(fit.sigma_high))
    if on_gil(series):
        return text + " (the GIL), fitted on %s" % where
    span = ""
    if fit.peak_low is not None:
        span = " [%.0f-%s]" % (fit.peak_low, "%.0f" % fit.peak_high
                               if fit.peak_high is not None else "beyond")
    if fit.sigma_low is None:
        text += (", no peak (no interval yet)" if fit.peak is None else
                 ", peak %s %.0f (no interval yet)" % (
                     "predicted at" if fit.peak > fit.top else "at", fit.peak))
    elif fit.peak_low is not None and fit.peak_low > fit.top:
        text += ", no peak within %s" % where
        text += (", peak predicted past %d%s" % (fit.top, span) if fit.peak is not None
                 else " (its interval: %s)" % span.strip(" []"))
    elif fit.peak is None or fit.peak > fit.top:
        text += ", peak predicted past %d%s" % (fit.top, span)
    else:
        text += ", peak at %.0f%s" % (fit.peak, span)
    amdahl = (fraction(fit.amdahl) if fit.amdahl_fits else
               "none passes through the rungs' intervals")
    return text + " (USL on %s against %s; Amdahl's law: %s)" % (where, fit.baseline, amdahl)


def fraction(value):
    """A serial fraction to two places, without a sign for zero; beyond
    the range the fit searches, which side."""
    if value < SIGMA_BOX[0]:
        return "below %g" % SIGMA_BOX[0]
    if value > SIGMA_BOX[1]:
        return "above %g" % SIGMA_BOX[1]
    return "%.2f" % (0.0 if abs(value) < 0.005 else value)


def describe_saving(ratio):
    if ratio is None:
        return "no shared round"
    shared = count(ratio.rounds, "shared rounds")
    if ratio.side is not None:
        shared += ", " + count(ratio.side.rounds, "workers side by side")
    if ratio.low is None:
        return "%.2fx, %s, no interval yet" % (ratio.point, shared)
    return "%.2fx [%.2f-%.2f], %s" % (ratio.point, ratio.low, ratio.high, shared)


def decisions(rows):
    """{topic: the names the takeaways state as the winner, a tie's all}."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return {}
    found = {"fastest": {r.model for r in Race(ours).named()}}
    for members in scaling_groups(ours).values():
        race = Race(members)
        found["best %s count" % race.leader.meta[K.SCALING_UNIT]] = {
            r.workers() for r in race.named()}
    return found


def agreement(first, other):
    """How far two files of the same benchmarks agree (``first``, ``other``:
    their rows by workload): speedups within AGREE of each other (of those
    both have), and takeaways that contradict (a winner, or tie, of one file
    that shares no name with the other's)."""
    close = total = topics = 0
    contradictions = []
    for workload, group in first.items():
        other_group = {r.name: r for r in other.get(workload, [])}
        for row in group:
            twin = other_group.get(row.name)
            if row.ratio and twin is not None and twin.ratio:
                total += 1
                close += max(row.speedup, twin.speedup) <= AGREE * min(
                    row.speedup, twin.speedup)
        if workload not in other:
            continue
        said = [decisions(g) for g in (group, other[workload])]
        for topic, names in said[0].items():
            topics += topic in said[1]
            if topic in said[1] and not names & said[1][topic]:
                contradictions.append("%s %s: %s against %s" % (
                    workload, topic, ", ".join(map(str, sorted(names, key=str))),
                    ", ".join(map(str, sorted(said[1][topic], key=str)))))
    return {"speedups_within_10pct": close, "speedups": total,
            "takeaways": topics, "contradictions": contradictions}

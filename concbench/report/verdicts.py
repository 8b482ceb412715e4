"""What the rows say: winners and ties, takeaways, and how far two files
agree.

A takeaway that picks a winner rests on paired comparisons of the rows
concerned, on the rounds both ran, by the same interval as the verdicts
(valid whenever the run stopped). It makes several comparisons at once, so
each is made at 95% / their number (Bonferroni): the takeaway as a whole
holds with 95%. Two rows are never told apart by whether their intervals
against the reference overlap.
"""

import math

from concbench import schema as K
from concbench.anytime import ALPHA, first_bounded
from concbench.stats import joint_floor, paired_ratio, verdict
from concbench.units import format_time as fmt_time

# An undecided row after this many rounds is named with its per-round
# spread, which is what keeps it open.
WIDE_AFTER = 10
# More workers "helped" when they saved this share of the time or more.
HELPED = 1 / 0.95


def pair(row, other, comparisons=1):
    """row's time / other's at 95% / ``comparisons``: per round, other's
    speedup against the reference over row's (each as its interval reads
    it: from its worker's own pairs, or from the reference's run of the
    same round), on the rounds both have."""
    mine, theirs = row.speedups(), other.speedups()
    if mine is None and theirs is None:
        return None
    if mine is None:
        mine = dict.fromkeys(theirs, 1.0)
    if theirs is None:
        theirs = dict.fromkeys(mine, 1.0)
    floor = joint_floor(getattr(row, "within_floor", None),
                        getattr(other, "within_floor", None))
    return paired_ratio(theirs, mine, ALPHA / max(1, comparisons), floor)


def fastest(rows):
    """The row with the best speedup against the common reference (paired
    by round: rows that ran different rounds are not ranked by their means
    over different moments), or the least mean without speedups."""
    if all(r.speedup for r in rows):
        return max(rows, key=lambda r: (r.speedup, -r.mean))
    return min(rows, key=lambda r: r.mean)


def winners(rows):
    """(the fastest row, [(row, its paired ratio against the fastest)] for
    every other row not shown slower than it, in file order). A row is
    shown slower when its time / the fastest's is above 1 at 95% / (rows -
    1), so that the true fastest is among those named with 95%."""
    best = fastest(rows)
    # A row shown faster than it on the rounds they share (they may share
    # other rounds than either shares with the reference) leads instead.
    for _ in rows:
        ahead = next((r for r in rows if r is not best
                      and verdict(pair(r, best, len(rows) - 1)) == "slower"), None)
        if ahead is None:
            break
        best = ahead
    tied = []
    for row in rows:
        if row is not best:
            ratio = pair(row, best, len(rows) - 1)
            if verdict(ratio) != "faster":
                tied.append((row, ratio))
    return best, tied


def winner_line(topic, best, tied, name, details, comparisons):
    """"fastest: asyncio (115 ms, 3.00x sequential)"; the tie when every
    other candidate is the same within 5%; else which row leads, and for
    the others whether their comparison with it has no interval yet (too
    few shared rounds at 95% / ``comparisons``) or holds 1."""
    if not tied:
        return "%s: %s (%s)" % (topic, name(best), details)
    if all(verdict(ratio) == "same" for _, ratio in tied):
        together = sorted([best] + [row for row, _ in tied], key=lambda r: r.position)
        return "%s: %s: the same within 5%% (%s)" % (
            topic, ", ".join(name(r) for r in together), details)
    kinds = {"same": [], "close": [], "open": []}
    for row, ratio in sorted(tied, key=lambda pair: pair[0].position):
        kind = ("open" if ratio is None or ratio.low is None
                else "same" if verdict(ratio) == "same" else "close")
        kinds[kind].append((row, ratio))
    parts = []
    if kinds["close"]:
        parts.append("not told apart from it in %s: %s" % (
            shared(kinds["close"]), ", ".join(name(r) for r, _ in kinds["close"])))
    if kinds["same"]:
        parts.append("the same within 5%%: %s" % ", ".join(name(r) for r, _ in kinds["same"]))
    if kinds["open"]:
        parts.append("no interval yet against %s (%s; %d needed at 95%% over %d "
                     "comparisons)" % (", ".join(name(r) for r, _ in kinds["open"]),
                                       shared(kinds["open"]),
                                       first_bounded(ALPHA / max(1, comparisons)),
                                       comparisons))
    return "%s: undecided; %s leads (%s); %s" % (topic, name(best), details,
                                                 "; ".join(parts))


def shared(tied):
    """'4 shared rounds', or '3-5 shared rounds'."""
    counts = sorted(ratio.rounds if ratio else 0 for _, ratio in tied)
    text = "%d" % counts[0] if counts[0] == counts[-1] else "%d-%d" % (counts[0], counts[-1])
    return "%s shared round%s" % (text, "" if text == "1" else "s")


def helping(members):
    """Where adding workers stopped saving 5% or more, along a series sorted
    by worker count: ("stopped", current, following, ratio) once a step is
    shown to save less than 5% (its current / following time below 1/0.95)
    after steps shown to save 5% or more; ("undecided", ...) at the first
    step shown neither; None when every step saved 5% or more. Each step is
    compared at 95% / (steps)."""
    steps = len(members) - 1
    for current, following in zip(members, members[1:]):
        ratio = pair(current, following, steps)
        if ratio is not None and ratio.low is not None:
            if ratio.low >= HELPED:
                continue
            if ratio.high < HELPED:
                return "stopped", current, following, ratio
        return "undecided", current, following, ratio
    return None


def scaling_groups(rows):
    """Models that state a scaling series (threads-2, threads-4, ...), by
    what they count, in the order of the file."""
    groups = {}
    for r in rows:
        if K.SCALING in r.meta:
            groups.setdefault(r.meta[K.SCALING], []).append(r)
    return groups


def series_of(members):
    """[(label, rows sorted by worker count)]: one series per label (chunk
    size), in which only the worker count changes."""
    series = {}
    for r in members:
        series.setdefault(r.meta.get(K.SCALING_SERIES, ""), []).append(r)
    return [(label, sorted(rows_of, key=lambda r: r.workers()))
            for label, rows_of in sorted(series.items())]


def open_comparisons(rows):
    """[(row, other, comparisons, bar)]: the paired comparisons the
    takeaways rest on that are not decided yet, so that bench.py can give
    both rows rounds: a row not told apart from the fastest (of the
    workload, or of a worker-count series), and the first step of a series
    not shown to save 5% or more, nor less (``bar``: the log ratio the
    step's interval must clear)."""
    ours = [r for r in rows if r.ours]
    found = []
    for members in [ours] + list(scaling_groups(ours).values()):
        if len(members) < 2:
            continue
        best, tied = winners(members)
        found.extend((row, best, len(members) - 1, 0.0) for row, ratio in tied
                     if verdict(ratio) == "undecided")
    for members in scaling_groups(ours).values():
        for _, rows_of in series_of(members):
            step = helping(rows_of)
            if step is not None and step[0] == "undecided":
                found.append((step[1], step[2], len(rows_of) - 1, math.log(HELPED)))
    return found


def takeaways(rows):
    """A few sentences derived from the rows of one workload."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return []
    lines = []
    best, tied = winners(ours)
    details = fmt_time(best.mean)
    if best.speedup:
        details += ", %.2fx %s" % (best.speedup, best.meta.get(K.REFERENCE_MODEL,
                                                                "the reference"))
    lines.append(winner_line("fastest", best, tied, lambda r: r.model, details,
                             len(ours) - 1))
    for counted, members in scaling_groups(ours).items():
        lines.extend(scaling_takeaways(counted, members))
    bad = [r for r in ours if "failures" in r.flags or "check" in r.flags]
    if bad:
        lines.append("failures or failed checks: " + ", ".join(
            "%s (%s)" % (r.model, r.failures or "check") for r in bad))
    bound = [r.model for r in ours if "server-bound" in r.flags]
    if bound:
        lines.append("server-bound (the server, not the model, set the pace): "
                     + ", ".join(bound))
    wide = [r for r in ours if r.verdict == "undecided"
            and len(r.round_ratios()) >= WIDE_AFTER]
    if wide:
        lines.append("still undecided after %d rounds or more, the spread is "
                     "the model's own: %s" % (WIDE_AFTER, ", ".join(
                         "%s (per-round speedup %.2fx-%.2fx over %d rounds)" % (
                             r.model, min(r.round_ratios()), max(r.round_ratios()),
                             len(r.round_ratios())) for r in wide)))
    incomplete = [r.model for r in ours if "cpu-incomplete" in r.flags]
    if incomplete:
        lines.append("cpu-incomplete: %s saw a process exit that no process "
                     "whose CPU is read had reaped; its CPU figures are low and "
                     "left out of the ideal" % ", ".join(incomplete))
    source = next((r.ideal_from for r in ours if r.ideal_from), None)
    if source and ours[0].meta.get(K.WORKLOAD_KIND) == "cpu":
        lines.append("ideal: from the least CPU per item of any model (%s's)"
                     % source)
    above = [r.model for r in ours if "above-ideal" in r.flags]
    if above:
        lines.append("above-ideal: %s ran faster than the ideal made from the "
                     "least CPU per item any model used; CPU is read just "
                     "outside the timed region, so for short batches that "
                     "least CPU is not a bound" % ", ".join(above))
    return lines


def scaling_takeaways(counted, members):
    """The best worker count of a series, and where more stopped helping."""
    best, tied = winners(members)
    counts = [r.workers() for r in [best] + [row for row, _ in tied]]
    # Two series (chunk sizes) can tie at one count: name the models.
    name = ((lambda r: str(r.workers())) if len(set(counts)) == len(counts)
            else (lambda r: r.model))
    details = fmt_time(best.mean)
    if name(best) != best.model:
        details = "%s, %s" % (best.model, details)
    lines = [winner_line("best %s count" % best.meta[K.SCALING_UNIT], best, tied,
                         name, details, len(members) - 1)]
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


def describe_saving(ratio):
    if ratio is None:
        return "no shared round"
    shared = "%d shared round%s" % (ratio.rounds, "" if ratio.rounds == 1 else "s")
    if ratio.low is None:
        return "%.2fx, %s, no interval yet" % (ratio.point, shared)
    return "%.2fx [%.2f-%.2f], %s" % (ratio.point, ratio.low, ratio.high, shared)


def decisions(rows):
    """{topic: the names the takeaways state as the winner, a tie's all}."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return {}
    best, tied = winners(ours)
    found = {"fastest": {r.model for r in [best] + [row for row, _ in tied]}}
    for members in scaling_groups(ours).values():
        best, tied = winners(members)
        found["best %s count" % best.meta[K.SCALING_UNIT]] = {
            r.workers() for r in [best] + [row for row, _ in tied]}
    return found


def agreement(first, other):
    """How far two files of the same benchmarks agree (``first``, ``other``:
    their rows by workload): speedups within 10% of each other (of those
    both have), and takeaways that contradict (a winner, or tie, of one file
    that shares no name with the other's)."""
    close = total = 0
    contradictions = []
    for workload, group in first.items():
        other_group = {r.name: r for r in other.get(workload, [])}
        for row in group:
            twin = other_group.get(row.name)
            if row.ratio and twin is not None and twin.ratio:
                total += 1
                close += max(row.speedup, twin.speedup) <= 1.10 * min(
                    row.speedup, twin.speedup)
        if workload not in other:
            continue
        said = [decisions(g) for g in (group, other[workload])]
        for topic, names in said[0].items():
            if topic in said[1] and not names & said[1][topic]:
                contradictions.append("%s %s: %s against %s" % (
                    workload, topic, ", ".join(map(str, sorted(names, key=str))),
                    ", ".join(map(str, sorted(said[1][topic], key=str)))))
    return {"speedups_within_10pct": close, "speedups": total,
            "contradictions": contradictions}

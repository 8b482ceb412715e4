"""What the rows say: winners and ties, takeaways, and how far two files
agree. A winner is named alone only when every other candidate is slower
(paired interval clear of 1); otherwise the tie is named."""

from concbench import schema as K
from concbench.stats import paired_ratio
from concbench.units import format_time as fmt_time

# An undecided row after this many rounds is reported as a finding: its
# spread is the model's own, not a lack of rounds.
WIDE_AFTER = 6


def is_tie(ratio):
    """A paired ratio whose 95% interval holds 1 (or that has none). The
    machine probe's spread is shown, not used here: the paired interval
    already carries the noise that the two benchmarks' runs shared."""
    return ratio is None or ratio.includes_one()


def winners(rows):
    """The fastest row, and the others whose paired interval against it
    holds 1 (file order).

    Rows that ran a different number of rounds (added rounds go to the
    undecided ones) are ranked by their speedup against the common
    reference, paired by round, rather than by their means over different
    moments; and two rows whose speedup intervals against it are disjoint
    differ, however few rounds they share with each other."""
    if all(r.speedup for r in rows):
        best = max(rows, key=lambda r: (r.speedup, -r.mean))
    else:
        best = min(rows, key=lambda r: r.mean)
    tied = [r for r in rows if r is not best
            and is_tie(paired_ratio(r.by_round, best.by_round))
            and not disjoint(r.ratio, best.ratio)]
    return best, tied


def disjoint(first, second):
    """Two speedup intervals against the same reference that do not meet."""
    if first is None or second is None or first.low is None or second.low is None:
        return False
    return first.high < second.low or second.high < first.low


def describe_winners(best, tied, name):
    if not tied:
        return name(best)
    together = sorted([best] + tied, key=lambda r: r.position)
    return "%s: within noise" % ", ".join(name(r) for r in together)


def stopped_helping(members):
    """The worker count after which adding workers no longer saved 5% or
    more, significantly (``members`` sorted by worker count)."""
    for current, following in zip(members, members[1:]):
        ratio = paired_ratio(current.by_round, following.by_round)
        if is_tie(ratio) or ratio.point < 1 / 0.95:
            return current.workers()
    return None


def scaling_groups(rows):
    """Models that state a scaling series (threads-2, threads-4, ...), by
    what they count, in the order of the file."""
    groups = {}
    for r in rows:
        if K.SCALING in r.meta:
            groups.setdefault(r.meta[K.SCALING], []).append(r)
    return groups


def takeaways(rows):
    """A few sentences derived from the rows of one workload."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return []
    lines = []
    best, tied = winners(ours)
    text = "fastest: %s (%s" % (describe_winners(best, tied, lambda r: r.model),
                                fmt_time(best.mean))
    if best.speedup:
        text += ", %.2fx %s" % (best.speedup, best.meta.get(K.REFERENCE_MODEL,
                                                             "the reference"))
    lines.append(text + ")")
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
    counts = [r.workers() for r in [best] + tied]
    # Two series (chunk sizes) can tie at one count: name the models.
    name = ((lambda r: str(r.workers())) if len(set(counts)) == len(counts)
            else (lambda r: r.model))
    lines = ["best %s count: %s (%s, %s)" % (
        best.meta[K.SCALING_UNIT], describe_winners(best, tied, name),
        best.model, fmt_time(best.mean))]
    # One series per label (chunk size): only the worker count changes.
    series = {}
    for r in members:
        series.setdefault(r.meta.get(K.SCALING_SERIES, ""), []).append(r)
    for label, rows_of in sorted(series.items()):
        rows_of.sort(key=lambda r: r.workers())
        stop = stopped_helping(rows_of)
        if stop is not None:
            where = " (%s)" % label if label else ""
            lines.append("more %s stopped helping after %d%s" % (counted, stop, where))
    return lines


def decisions(rows):
    """{topic: the names the takeaways state as the winner, a tie's all}."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return {}
    best, tied = winners(ours)
    found = {"fastest": {r.model for r in [best] + tied}}
    for members in scaling_groups(ours).values():
        best, tied = winners(members)
        found["best %s count" % best.meta[K.SCALING_UNIT]] = {
            r.workers() for r in [best] + tied}
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

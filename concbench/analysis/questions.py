"""The questions a run answers, and whether each is answered yet.

A user reads a run for a few answers: each row's verdict against the
reference (faster, slower, the same within the band), which model of a workload
is the fastest, which worker count is best, and where more workers stopped
helping. This module says, from the rows as the report builds them, which
of those are answered and which are still open, with the comparisons each
rests on. The report words the answers (``concbench.report.verdicts``); the
run's allocation (``concbench.run.allocation``) spends its rounds on the open
ones. Both read them here, so that the run stops on the answers the report
will print.

The races (the fastest model, the best worker count) are
``concbench.analysis.race``'s.
"""

from concbench import schema as K
from concbench.schema import BY_ROUND, NONE
from concbench.analysis.comparisons import row_question
from concbench.analysis.race import Race
from concbench.analysis.steps import step_question


def scaling_groups(rows):
    """Models that state a scaling series (threads-2, threads-4, ...), by
    what they count, in the order of the file."""
    groups = {}
    for r in rows:
        # A point of a series knows its worker count (a file's value may
        # have been left out as out of range: concbench.report.load).
        if K.SCALING in r.meta and K.PARALLELISM in r.meta:
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


def workload_questions(rows, control=None, precision=None):
    """The questions of one workload's rows (``control``: its A/A control's
    row): every row's verdict, and unless ``precision`` is the target, the
    fastest model, the best worker count of each series and where more
    workers stopped helping."""
    ours = [r for r in rows if r.ours]
    found = [row_question(r, precision) for r in ours
             if r.reference is not None and r is not r.reference]
    if control is not None and control.reference is not None:
        found.append(row_question(control, precision, kind="control"))
    # Rows paired in their worker compare their speedups, which need the
    # reference's row; rows paired by round compare their own runs.
    ours = [r for r in ours if r.pairing in (BY_ROUND, NONE) or r.reference is not None]
    if precision is not None or len(ours) < 2:
        return found
    workload = ours[0].workload
    found.append(Race(ours).question("fastest", workload, "fastest"))
    for counted, members in scaling_groups(ours).items():
        if len(members) > 1:
            unit = members[0].meta.get(K.SCALING_UNIT, counted)
            found.append(Race(members).question("count", workload, "best %s count" % unit))
        for label, rows_of in series_of(members):
            if len(rows_of) > 1:
                found.append(step_question(workload, counted, label, rows_of))
    return found


def all_questions(groups, controls, precision=None):
    """Every workload's questions, in file order (``groups``: rows by
    workload; ``controls``: their A/A controls' rows)."""
    return [question for workload, rows in groups.items()
            for question in workload_questions(rows, controls.get(workload), precision)]


def answered_takeaways(questions):
    """The labels of the takeaways (not the rows' verdicts) answered."""
    return {q.label for q in questions if q.answered and q.kind not in ("row", "control")}


def cut(suite, last):
    """The file as it stood after round ``last`` (one of its rounds): every
    run of a later round left out."""
    import pyperf

    kept = []
    for bench in suite.get_benchmarks():
        runs = [run for run in bench.get_runs() if run.get_metadata()[K.ROUND] <= last]
        if runs:
            kept.append(pyperf.Benchmark(runs))
    return pyperf.BenchmarkSuite(kept)


def answered_after(suite, questions):
    """{label: rounds}: after how many of the file's rounds each answered
    takeaway of ``questions`` (read from all of ``suite``) was answered and
    stayed answered to the end, as bench.py read the file after each round
    (an answer that was open again is dated from its last answer). The file
    is cut after each round, from the last back, until every answer is
    dated. A file whose runs do not all say their round (plain pyperf's),
    or run in pyperf's order (its rounds are each benchmark's runs, not
    moments bench.py read the file at), dates none."""
    from concbench.analysis.rows import build_rows

    if suite.get_metadata().get(K.ORDER) == "pyperf":
        return {}
    rounds = {run.get_metadata().get(K.ROUND) for bench in suite.get_benchmarks()
              for run in bench.get_runs()}
    if None in rounds:
        return {}
    rounds = sorted(rounds)
    pending = answered_takeaways(questions)
    found = {}
    for index in range(len(rounds) - 2, -1, -1):
        if not pending:
            break
        part = cut(suite, rounds[index])
        controls = {}
        now = answered_takeaways(all_questions(build_rows(part, controls), controls))
        for label in pending - now:
            found[label] = index + 2
        pending &= now
    found.update(dict.fromkeys(pending, 1))
    return found

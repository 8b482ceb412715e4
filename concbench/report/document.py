"""The report as one document, built once: what ``--format json`` prints,
and what every renderer (text, markdown, csv, html, the charts) draws.

Each file's rows are built once (``Analysis``); the header, the tables,
the takeaways and a comparison's changes, best models and agreement are all
read from them.
"""

import os

from concbench.analysis import ceiling
from concbench import schema as K

from .columns import COLUMNS, mark_memory, row_record, sort_rows
from .compare import best_per_file, records
from concbench.analysis.controls import control_state, untrusted
from concbench.analysis.latencies import curve, sweep_lines
from concbench.analysis.questions import scaling_groups
from concbench.analysis.rows import MODEL_FACTS, build_rows

from .environment import header_lines, workload_params
from .load import ReportError
from .verdicts import agreement, fits_of, takeaways


class Analysis:
    """One file, its rows by workload and its A/A controls, built once."""

    def __init__(self, path, suite):
        self.path, self.suite = path, suite
        self.controls = {}
        self.groups = build_rows(suite, self.controls)

    def selected(self, workloads=None):
        return {name: rows for name, rows in self.groups.items()
                if not workloads or name in workloads}

    def header_entry(self):
        return (self.path, self.suite, self.groups, self.controls)


def single(analysis, workloads=None, sort="name", p99_bound=None):
    """The document of one file."""
    groups = analysis.selected(workloads)
    if not groups and not workloads:
        raise ReportError("%s: no model's benchmark, only the machine's ceiling"
                          % analysis.path)
    if not groups:
        raise ReportError("%s: no benchmark of workload %s"
                          % (analysis.path, ",".join(workloads)))
    controls = analysis.controls
    machine = machine_ceiling(analysis.suite)
    usable = [name for name in groups
              if control_state(controls.get(name)) not in ("missing", "unusable")]
    return {"file": analysis.path,
            "header": header_lines([analysis.header_entry()]),
            "notes": notes(groups),
            # False when a control came out faster or slower; None without one.
            "trusted": (not untrusted({n: controls[n] for n in usable})
                        if usable else None),
            "workloads": {name: workload_entry(rows, sort, controls.get(name), machine)
                          for name, rows in groups.items()},
            "sweeps": sweep_lines(groups, p99_bound)}


def machine_ceiling(suite):
    """{family: [each rung's record]} of the machine's ceiling
    (``concbench.analysis.ceiling``), which the scaling charts of CPU
    workloads draw."""
    return {family: [rung.record() for rung in rungs]
            for family, rungs in ceiling.rungs_of(suite).items()}


def curve_records(rows):
    """Each series' fit of Amdahl's law and the USL (``analysis.scaling``)."""
    return [dict(fit.record(), family=counted, series=label)
            for counted, members in scaling_groups([r for r in rows if r.ours]).items()
            for label, _, fit in fits_of(members)]


def workload_entry(rows, sort, control=None, ceiling_records=None):
    reference = next((r for r in rows if r.ours and r.is_reference()), None)
    curves = curve_records(rows)
    return {"params": workload_params(rows),
            "reference": reference.model if reference else None,
            "control": control_record(control),
            "rows": mark_memory([dict(row_record(r), **{K.MODEL: r.model},
                                      series=r.series() if r.ours else None,
                                      workers=r.workers() if r.ours and r.series() else None,
                                      latency_curve=curve(r))
                                 for r in sort_rows(rows, sort)]),
            "takeaways": takeaways(rows, control),
            # Only where there are some: files without them read as before.
            **({"curves": curves} if curves else {}),
            # The machine's ceiling, on the charts of CPU workloads.
            **({"ceiling": ceiling_records} if ceiling_records and rows[0].meta.get(
                K.WORKLOAD_KIND) == "cpu" else {})}


def control_record(row):
    """The A/A control's speedup and verdict; None when the workload has no
    usable control."""
    if control_state(row) in ("missing", "unusable"):
        return None
    ratio = row.ratio
    return {"benchmark": row.name, K.CONTROL_OF: row.meta[K.CONTROL_OF],
            "speedup": ratio.point, "speedup_ci_low": ratio.low,
            "speedup_ci_high": ratio.high, "verdict": row.verdict,
            "rounds": ratio.rounds}


def notes(groups):
    """What the tables cannot show for some rows, and why."""
    found = []
    plain = [r.name for rows in groups.values() for r in rows if not r.ours]
    if plain:
        found.append("note: %d benchmark(s) carry no concurrency-bench metadata "
                     "(not written by bench.py?); only pyperf's figures are shown "
                     "for them" % len(plain))
    older = [r.name for rows in groups.values() for r in rows
             if r.ours and not (r.knows_model() and K.REFERENCE_MODEL in r.meta)]
    if older:
        found.append("note: %d benchmark(s) come from an older bench.py that did "
                     "not record what their model is (%s, reference_model); they "
                     "get no speedup, ideal time or efficiency"
                     % (len(older), ", ".join(MODEL_FACTS)))
    return found


def comparison(analyses, workloads=None):
    """The document of several files, the first one the base."""
    paths = [a.path for a in analyses]
    groups = [a.selected(workloads) for a in analyses]
    return {"files": paths,
            "header": header_lines([a.header_entry() for a in analyses]),
            "benchmarks": mark_file_memory(records(paths, groups), len(paths)),
            "best": best_per_file(paths, groups),
            "agreement": [dict(agreement(groups[0], other), file=path)
                          for other, path in zip(groups[1:], paths[1:])]}


def mark_file_memory(benchmarks, files):
    """Each file's memory cells marked, per workload, where they mix
    sources (``columns.mark_memory``)."""
    for workload in dict.fromkeys(r[K.WORKLOAD] for r in benchmarks):
        for i in range(files):
            mark_memory([r["files"][i] for r in benchmarks if r[K.WORKLOAD] == workload])
    return benchmarks


def label(path):
    """A file's short name in tables and charts (py313t.json -> py313t,
    py38.json.gz -> py38)."""
    name = os.path.basename(path)
    name = name[:-3] if name.endswith(".gz") else name
    return os.path.splitext(name)[0]


def is_comparison(document):
    return "files" in document


def column_keys():
    return [column.key for column in COLUMNS]

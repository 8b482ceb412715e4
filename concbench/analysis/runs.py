"""What a benchmark's runs recorded, combined as the schema says: read by
the rows of both the run (what is still open) and the report."""

import statistics

from concbench import schema as K


def run_figures(bench):
    """Each run's metadata; pyperf's get_metadata() drops keys that differ."""
    return [run.get_metadata() for run in bench.get_runs() if run.values]


def across_runs(runs, key):
    """A run key's value for a benchmark, combined over its runs as the
    schema says (``Key.runs``)."""
    return sum_of(runs, key) if key.runs.startswith(K.TOTAL) else median_of(runs, key)


def median_of(runs, key):
    values = [meta[key] for meta in runs if key in meta]
    return statistics.median(values) if values else None


def sum_of(runs, key):
    values = [meta[key] for meta in runs if key in meta]
    return sum(values) if values else None


def gil_runs(suite):
    """Each run's gil_enabled ("yes"/"no"), and the modules that re-enabled it."""
    states, by = [], []
    for bench in suite.get_benchmarks():
        for run in bench.get_runs():
            meta = run.get_metadata()
            if K.GIL_ENABLED in meta:
                states.append(meta[K.GIL_ENABLED])
                by.extend(m for m in meta.get(K.GIL_ENABLED_BY, "").split(",")
                          if m and m not in by)
    return states, by


def usual_gil(suite):
    """The GIL state the file's runs should have (``gil_expected``: on a
    free-threaded build off, unless --gil on or PYTHON_GIL=1 asked for it),
    or, in files without it, the state of most runs; None if no run
    recorded it."""
    states, _ = gil_runs(suite)
    if not states:
        return None
    expected = suite.get_metadata().get(K.GIL_EXPECTED)
    if expected:
        return expected
    return max(("yes", "no"), key=states.count)

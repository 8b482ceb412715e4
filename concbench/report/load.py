"""Reading bench.py's files: each one checked, or refused in one line.

A file may come from anyone. pyperf checks its own structure; the metadata
the report reads is checked here against the schema's type of each key
(``concbench.schema``) and its range: a value outside them is dropped, so
the report shows it as missing, and one line on stderr names the file, the
key and the first benchmark that had it."""

import glob
import gzip
import json
import math
import os

from concbench import schema
from concbench import schema as K

# Keys whose values count something that is at least one (or is above 0).
AT_LEAST_ONE = {K.ITEMS_PER_BATCH, K.CONCURRENCY, K.PARALLELISM, K.INTERPRETERS,
                K.CHUNK_SIZE, K.THREADS, K.PROCESSES, K.CPUS_USABLE, K.CPUS_AFFINITY,
                K.CPU_CORES, K.CPUS_SIZED_FOR}
ABOVE_ZERO = {K.PROBE_S, K.CPU_QUOTA, K.MAX_TIME_S}
# pyperf's keys the report reads, with their type and least value.
PYPERF_READ = {"cpu_count": (int, 1), "duration": (float, 0), "loops": (int, 1),
               "date": (str, None), "unit": (str, None), "python_version": (str, None),
               "python_implementation": (str, None), "cpu_model_name": (str, None),
               "platform": (str, None), "hostname": (str, None),
               # Peak memory in bytes (``rows.MEMORY_SOURCES``).
               **{key: (int, 1) for key in ("mem_max_rss", "command_max_rss",
                                            "tracemalloc_peak", "mem_peak",
                                            "mem_peak_pagefile_usage")}}


class ReportError(Exception):
    """Bad input: one line on stderr, exit status 2."""


def load(path, warnings=None):
    """The pyperf file at ``path``, checked (``checked``): ReportError in one
    line where it cannot be read; lines for ``warnings`` (a list) where a
    value of it is shown as missing."""
    import pyperf

    if not os.path.exists(path):
        raise ReportError("%s: no such file" % path)
    if os.path.isdir(path):
        raise ReportError("%s: is a directory, not a pyperf JSON file" % path)
    try:
        data = json.loads(read_text(path))
    except (UnicodeDecodeError, ValueError, EOFError, OSError) as exc:
        raise ReportError("%s: not a JSON file (%s)" % (path, str(exc).splitlines()[0])) from None
    if not isinstance(data, dict) or "benchmarks" not in data or "version" not in data:
        raise ReportError("%s: a JSON file, but not one written by pyperf "
                          "(no 'version' and 'benchmarks' keys)" % path)
    try:
        suite = pyperf.BenchmarkSuite.load(path)
    except Exception as exc:    # pyperf's own validation, in its words
        raise ReportError("%s: pyperf cannot read it: %s" % (path, exc)) from None
    if not suite.get_benchmarks():
        raise ReportError("%s: holds no benchmark" % path)
    return checked(suite, path, warnings)


def problem(key, value):
    """Why ``value`` cannot be ``key``'s (a schema key, or a pyperf key the
    report reads), or None where it can (or the key is none of those)."""
    if key in schema.BY_NAME:
        kind = schema.BY_NAME[key].kind
        least = 1 if key in AT_LEAST_ONE else None
    elif key in PYPERF_READ:
        kind, least = PYPERF_READ[key]
    else:
        return None
    if key == K.CONCURRENCY and value == "unbounded":
        return None
    if kind is str:
        return None if isinstance(value, str) else "is not text"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "is not a number"
    if kind is int and not isinstance(value, int):
        return "is not a whole number"
    if not math.isfinite(value) or abs(value) > schema.LARGEST:
        return "is out of range"
    if key in ABOVE_ZERO and value <= 0:
        return "is not above 0"
    if value < (least or 0):
        return "is below %d" % (least or 0)
    return None


def checked(suite, path, warnings=None):
    """``suite`` with each value of the metadata the report reads that is
    not of its key's type and range left out, and each run whose values
    are not times (or figures) a float can hold left out; one line for
    ``warnings`` per key and problem."""
    import pyperf

    found = {}      # (key, problem) -> [count, first benchmark, first value]
    benchmarks = []
    for bench in suite.get_benchmarks():
        runs, changed = [], False
        for run in bench.get_runs():
            wrong = [value for value in run.values if not schema.SMALLEST < value < schema.LARGEST]
            if wrong:
                note(found, ("values", "are out of range"), bench, wrong[0])
                changed = True
                continue
            meta = run.get_metadata()
            clean = {}
            for key, value in meta.items():
                why = problem(key, value)
                if why is None:
                    clean[key] = value
                else:
                    note(found, (key, why), bench, value)
            if len(clean) != len(meta):
                changed = True
                run = pyperf.Run(run.values, warmups=run.warmups, metadata=clean,
                                 collect_metadata=False)
            runs.append(run)
        if not changed:
            benchmarks.append(bench)
        elif runs:
            benchmarks.append(pyperf.Benchmark(runs))
    for (key, why), (count, name, value) in found.items():
        if warnings is not None:
            warnings.append("%s: %s %r %s in benchmark %s%s; shown as missing" % (
                path, key, shorten(value), why, name,
                " (and %d more)" % (count - 1) if count > 1 else ""))
    if not found:
        return suite
    if not benchmarks:
        raise ReportError("%s: no run of any benchmark has values a report can read" % path)
    return pyperf.BenchmarkSuite(benchmarks, filename=path)


def note(found, which, bench, value):
    entry = found.setdefault(which, [0, bench.get_name(), value])
    entry[0] += 1


def shorten(value):
    """A value as the warning quotes it: at most 40 characters of text."""
    return value[:40] + "..." if isinstance(value, str) and len(value) > 40 else value


def read_text(path):
    """The file's text, gzip-compressed or not (pyperf writes either)."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def written_by_bench(suite):
    """Whether any benchmark of ``suite`` carries bench.py's metadata."""
    return any(schema.WORKLOAD in run.get_metadata()
               for bench in suite.get_benchmarks() for run in bench.get_runs()[:1])


def expand(paths):
    """Glob patterns that match no file as given (tox passes them unexpanded),
    expanded in name order; a pattern that matches nothing is an error."""
    files = []
    for path in paths:
        if os.path.exists(path) or not any(c in path for c in "*?["):
            files.append(path)
            continue
        matches = sorted(glob.glob(path))
        if not matches:
            raise ReportError("no file matches %s" % path)
        files.extend(matches)
    return files

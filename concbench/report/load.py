"""Reading bench.py's files: each one checked, or refused in one line."""

import glob
import gzip
import json
import os

from concbench import schema


class ReportError(Exception):
    """Bad input: one line on stderr, exit status 2."""


def load(path):
    import pyperf

    if not os.path.exists(path):
        raise ReportError("%s: no such file" % path)
    if os.path.isdir(path):
        raise ReportError("%s: is a directory, not a pyperf JSON file" % path)
    try:
        data = json.loads(read_text(path))
    except (UnicodeDecodeError, ValueError, EOFError, OSError) as exc:
        raise ReportError("%s: not a JSON file (%s)" % (path, str(exc).splitlines()[0]))
    if not isinstance(data, dict) or "benchmarks" not in data or "version" not in data:
        raise ReportError("%s: a JSON file, but not one written by pyperf "
                          "(no 'version' and 'benchmarks' keys)" % path)
    try:
        suite = pyperf.BenchmarkSuite.load(path)
    except Exception as exc:    # pyperf's own validation, in its words
        raise ReportError("%s: pyperf cannot read it: %s" % (path, exc))
    if not suite.get_benchmarks():
        raise ReportError("%s: holds no benchmark" % path)
    return suite


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

"""Every check the master makes before the first benchmark (descriptors,
servers, the output file), and the services it starts for parameters the
user left empty: any failure is one line and exit status 2 (1 for a server
that does not start), with nothing written."""

import os
import sys

from concbench.run import progress
from concbench.run.progress import fail
from concbench.run.results import OutputError, ResultsFile, move_earlier


def check_descriptors(matrix, hard_limit):
    """Say before starting when a model needs more sockets than allowed."""
    if hard_limit is None:
        return
    for bench in matrix:
        connections = bench.in_flight() * bench.workload.sockets_per_item
        if connections and connections + 64 > hard_limit:
            fail("%s keeps up to %d connections open, but the hard limit on open "
                 "files is %d; raise it (ulimit -Hn, or limits.conf) or lower the "
                 "concurrency" % (bench.name, connections, hard_limit))


def preflight(matrix):
    """Each workload checks its server before any benchmark starts."""
    by_workload = {}
    for bench in matrix:
        by_workload.setdefault(bench.workload, {})[bench.name] = bench.in_flight()
    for workload, counts in by_workload.items():
        try:
            workload.preflight(counts)
        except ValueError as exc:
            fail(str(exc))


def open_results(args, matrix, hard_limit):
    """Every check that can fail before a benchmark runs; then the output
    (in memory only without -o or --append)."""
    try:
        results = ResultsFile(args.output or args.append, append=bool(args.append))
        check_descriptors(matrix, hard_limit)
        preflight(matrix)
        if args.output and args.keep_earlier:
            moved = move_earlier(args.output)
            if moved:
                print("%s: moved the earlier %s to %s"
                      % (progress.PROG, args.output, os.path.relpath(moved)),
                      file=sys.stderr, flush=True)
    except OutputError as exc:
        fail(str(exc))
    return results


def provide_services(args, matrix):
    """Start what stands in for parameters the user left empty (the local
    load server for --server-url, an embedded PostgreSQL for --db-url);
    return ({param: value} for the workers, the names of the workloads
    left out because what they need cannot start here, each said in a
    line)."""
    from concbench.workloads.base import Unavailable

    provided, left_out = {}, []
    for workload in dict.fromkeys(bench.workload for bench in matrix):
        if not workload.needs_providing():
            continue
        try:
            provided.update(workload.provide())
        except Unavailable as exc:
            progress.say("%s: %s: left out: %s" % (progress.PROG, workload.name, exc))
            left_out.append(workload.name)
        except RuntimeError as exc:     # a server that does not start
            fail(str(exc), status=1)
        except ValueError as exc:       # a server that cannot be used
            fail(str(exc))
    return provided, left_out


# -- metadata of the whole run ------------------------------------------------

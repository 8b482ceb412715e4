"""The timed function pyperf calls in its workers: a worker's batches, each
beside a batch of the reference where the benchmark pairs in its worker.

Only the batch itself is timed (``concbench.run.batch``); its check against
the sequential reference and the figures around it happen outside the timed
region, and any mismatch ends the benchmark loudly.
"""

import sys
import time
import traceback

from concbench import schema
from concbench.run.batch import BatchFailed, refuse_total_failure, run_batch, watched_run
from concbench.run.partner import PartnerFailed, pin_worker
from concbench.run.run_figures import RunFigures
from concbench.run.schedule import reference_first
from concbench.workloads.base import CheckError


def time_batches(loops, bench):
    """pyperf's time function: ``loops`` batches of ``bench``, in seconds.
    A benchmark paired in its worker (``bench.partner``) runs one batch of
    the reference beside each of its own (``concbench.run.schedule``); only its
    own are pyperf's values; warm-ups are pairs too."""
    try:
        prepared = bench.prepare()
        elapsed = 0.0
        for _ in range(loops):
            if bench.partner is None:
                seconds, figures = run_batch(bench, prepared)
            else:
                seconds, figures = run_pair(bench, prepared)
            bench.batches_done += 1
            if figures is not None:
                RunFigures.current.add_batch(seconds, figures)
            elapsed += seconds
        return elapsed
    except BatchFailed as exc:
        print("ERROR: %s" % exc, file=sys.stderr, flush=True)
        sys.exit(1)


def run_pair(bench, prepared):
    """The benchmark's batch and a batch of the reference next to it, in the
    order the schedule gives this pair; the reference's time and the gap
    between the two go to the run's figures beside the benchmark's own."""
    recorder = RunFigures.current
    if recorder is None:
        raise BatchFailed("%s: pairing in the worker needs the per-run figures "
                          "(the concbench pyperf hook)" % bench.name)
    if bench.batches_done == 0 and bench.partner_process is not None:
        bench.pinned = pin_worker(bench.model)
    if reference_first(recorder.pairs, bench.round):
        first = time.perf_counter()
        reference, failures = run_partner(bench, prepared)
        second = time.perf_counter()
        seconds, figures = run_batch(bench, prepared)
    else:
        second = time.perf_counter()
        seconds, figures = run_batch(bench, prepared)
        first = time.perf_counter()
        reference, failures = run_partner(bench, prepared)
    recorder.pairs += 1
    if bench.batches_done < bench.warmups:
        # Its reference's batch tells whether a first batch is slower.
        bench.warmup_references.append(reference)
    elif bench.warmup_references:
        figures[schema.WARMUP_REFERENCE_S] = " ".join(
            "%.6g" % each for each in bench.warmup_references)
        bench.warmup_references = []
    figures[schema.PAIRED_REFERENCE_S] = reference
    if bench.partner_process is not None:
        figures[schema.MODEL_PROCESS] = ("forked" if bench.partner_process.forked
                                         else "worker")
    figures[schema.PAIR_GAP_S] = abs(second - first)
    figures[schema.PAIRED_REFERENCE_FAILURES] = failures
    return seconds, figures


def run_partner(bench, prepared):
    """One checked batch of the reference model beside the benchmark's:
    (seconds, failed items), from the worker's partner process
    (``concbench.run.partner``), or in the worker where there is none, watched
    there as the benchmark's batch is. Its memory, CPU and latencies are
    nobody's figures."""
    if bench.partner_process is not None:
        try:
            seconds, failures, items = bench.partner_process.run(bench.pinned is not None)
        except PartnerFailed as exc:
            raise BatchFailed("%s: %s" % (bench.name, exc)) from None
        counts = {schema.FAILURES: failures, schema.ITEMS: items}
    else:
        # Watched as the benchmark's own batch is (watched_run).
        try:
            seconds, counts, _, _, _ = watched_run(bench.partner, prepared)
        except CheckError as exc:
            raise BatchFailed("%s: the reference's batch beside it failed its "
                              "check: %s" % (bench.name, exc)) from None
        except Exception as exc:
            traceback.print_exc()
            raise BatchFailed("%s: the reference's batch beside it raised %s: %s"
                              % (bench.name, type(exc).__name__, exc)) from None
    refuse_total_failure(bench.partner, counts)
    return seconds, counts.get(schema.FAILURES, 0)



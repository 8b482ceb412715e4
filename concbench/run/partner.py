"""The reference's batches beside a model's, in a process of their own.

A model leaves state behind in the process that ran it, and the reference
is sensitive to it: after a process pool's rotate batch, the worker's
allocator serves image buffers from its heap (glibc raises its mmap
threshold when the pool's large result buffers are freed), so a sequential
reference in the same process runs faster than in a process of its own
(measured in a57d0ca: git show a57d0ca). Reused pools, idle
threads and, on a free-threaded build, objects made immortal when the first
thread started are others. So the worker forks this process before the model
runs anything (before its pool opens, before its first batch): the copy
shares the worker's hash seed, address layout, inputs and reference
results, and never sees the model. It runs a reference batch whenever the
worker asks, strictly between the worker's own batches, and answers with
its time. Where fork is not safe to use this way (outside Linux), the
reference's batches run in the worker itself.

Which of the two processes runs the model alternates from one run of a
benchmark to the next (``model_forked``): in its first run the model stays
in the worker and the copy runs the reference, in its second the copy runs
the model and the worker the reference, and so on. A copy is not its
parent's equal: the two differ from one worker to the next, beyond what
their pairs spread, and on average (measured in d9ec4d4: git show d9ec4d4).
On one side only, such a difference would be a bias of every row of a run;
alternated, it is noise the interval carries.
"""

import os
import signal
import sys

from concbench import schema
from concbench.run import pinning
from concbench.run.interventions import used
from concbench.workloads.base import CheckError


def supported():
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def current_cpu():
    """The CPU this thread runs on (Linux), None if unknown."""
    try:
        with open("/proc/thread-self/stat", "rb") as stat:
            return int(stat.read().rpartition(b")")[2].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def model_forked(runs_before):
    """Whether the model runs in the forked copy rather than in the worker
    pyperf started: in every other run of its benchmark, ``runs_before``
    being the runs of it the run's schedule holds before this one (an added
    round may skip a benchmark, so the round's own number would not
    alternate); in pyperf's order (None: the worker cannot tell its place),
    by the worker's pid, odd or even."""
    return (runs_before if runs_before is not None else os.getpid()) % 2 == 1


def single_threaded(model):
    """Whether one thread of one process runs the model's items."""
    return model.parallelism == 1 and not model.runs_in_subprocesses


def pin_worker(model):
    """Keep the worker on the CPU it runs on now when its model runs on one
    thread (the reference's process beside it goes to the same CPU before
    each of its batches): a machine's CPUs can change speed on their own,
    for seconds at a time (docs/figures.md, "Between a model's workers: why
    the unit is a worker"), and two single-threaded batches compared on two
    CPUs would differ by that. A model with threads or processes of its own
    is left to the scheduler, as its reference is. Returns the CPU, or
    None."""
    if not used("pinning"):
        return None
    cpu = current_cpu()
    if cpu is None or not single_threaded(model) or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        if cpu not in os.sched_getaffinity(0):
            return None
        pinning.pin(cpu)
    except OSError:
        return None
    return cpu


class PartnerFailed(Exception):
    """The reference's batch failed in the partner process: one line."""


class Partner:
    """The process that runs the reference's batches (``run``): the copy
    forked from the worker, or with ``forked`` the worker itself while the
    copy goes on as the worker (it runs the model, writes pyperf's values
    and ends the run; the process pyperf started then exits with its
    status)."""

    def __init__(self, bench, prepared, forked=False):
        from multiprocessing import Pipe

        ours, theirs = Pipe()
        worker = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        self.forked = forked
        if forked:
            if pid != 0:
                ours.close()
                _serve(theirs, bench, prepared, copy=pid)   # never returns
            theirs.close()
            from concbench.run.lifeline import follow
            from concbench.run.run_figures import BatchProbe

            follow(worker)
            BatchProbe.after_fork()         # a sampler of the copy's own
            self.pid, self.connection = worker, ours
            return
        if pid == 0:
            ours.close()
            _serve(theirs, bench, prepared, parent=worker)    # never returns
        theirs.close()
        self.pid, self.connection = pid, ours

    def run(self, pinned):
        """(seconds, failed items, items) of one checked batch of the
        reference; where this process keeps to one CPU (``pinned``), on
        that CPU: a machine's CPUs can run at speeds of their own from one
        second to the next, and the batch beside it must see the speed it
        saw. Beside a model of several threads or processes, where the
        scheduler decides, it decides for the reference too, as for a
        script's sequential run: kept to one CPU, the reference could not
        leave a slow or busy one (docs/figures.md, "The harness leaves the
        model as it is")."""
        try:
            self.connection.send(current_cpu() if pinned else None)
            answer = self.connection.recv()
        except (EOFError, OSError) as exc:
            raise PartnerFailed("the reference's process ended (%s)" % exc) from None
        if answer[0] != "ok":
            raise PartnerFailed(answer[1])
        return answer[1:]

    def close(self):
        """End the process (its pipe closes) and reap it."""
        if self.connection is None:
            return
        self.connection.close()
        self.connection = None
        if self.forked:     # the reference's process is this one's parent
            return
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _serve(connection, bench, prepared, parent=None, copy=None):
    """The partner's life: a reference batch per request, until the worker
    closes the pipe or ends. ``parent``: the worker this copy was forked
    from; ``copy``: the copy that goes on as the worker, whose status this
    process exits with."""
    status, model = 0, None
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # the worker decides
        from concbench.run.lifeline import follow
        follow(parent)
        from concbench.run.batch import watched_run
        from concbench.run.run_figures import BatchProbe, RunFigures

        # The worker's sampler is the worker's: this process starts its own,
        # now, while the worker prepares.
        BatchProbe.after_fork()
        BatchProbe.start_sampler(copy)

        # Each batch's figures, kept for the process's life as the worker
        # keeps its own (``RunFigures``), though this process never reads
        # them: the few objects a batch leaves behind keep the allocator's
        # arenas its items used, on both sides alike. A reference that kept
        # none would give its arenas back after every batch and take them
        # again, page by page, unlike the model beside it (docs/figures.md,
        # "The harness leaves the model as it is").
        kept = RunFigures()
        model = bench.partner.model
        # One thread runs the reference: it goes where the worker last ran,
        # when the worker keeps to one CPU (the worker sends None when it
        # does not). A reference with threads of its own is left to the
        # scheduler.
        pin = single_threaded(model) and used("pinning")
        model.open()
        bench.workload.open(model)     # connections of its own, not the worker's
        items, _, sync_fn, async_fn = prepared
        if items and used("prime"):
            model.prime(sync_fn, async_fn, items[0])
        while True:
            try:
                cpu = connection.recv()
            except (EOFError, OSError):
                break
            if cpu is not None and pin:
                try:
                    pinning.pin(cpu)
                except OSError:     # not allowed here: anywhere will do
                    pass
            try:
                # Watched as the worker's own batches are: probe, sampler,
                # the workload's figures (``watched_run``). A copy running
                # the model is the worker's tree, not this one's.
                seconds, counts, waits, tree, _ = watched_run(bench.partner, prepared,
                                                              partner=copy)
                figures = dict(tree or {})
                figures.update(counts)
                figures.update(waits)
                kept.add_batch(seconds, figures)
                answer = ("ok", seconds, counts.get(schema.FAILURES, 0),
                          counts.get(schema.ITEMS, 0))
            except CheckError as exc:
                answer = ("error", "the reference's batch beside it failed its "
                          "check: %s" % exc)
            except Exception as exc:
                answer = ("error", "the reference's batch beside it raised %s: %s"
                          % (type(exc).__name__, exc))
            connection.send(answer)
    except BaseException:
        status = 1
    finally:
        from concbench.run.run_figures import BatchProbe
        BatchProbe.close_sampler()      # exit skips atexit: reap it here
        if model is not None:
            # What the model opened (a reused pool, a cluster beside a
            # race's leader) ends with it, as the worker's atexit would.
            try:
                model.close()
            except Exception:
                pass
        if copy is not None:
            _end_as(connection, copy)
        os._exit(status)


def _end_as(connection, copy):
    """Wait for the copy that went on as the worker, then end as it ended:
    pyperf's master sees this process, not the copy. Closing the pipe first
    lets a copy still asking for a batch fail with a message of its own."""
    connection.close()
    try:
        _, status = os.waitpid(copy, 0)     # retried on EINTR (PEP 475)
    except ChildProcessError:
        os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:    # killed by a signal: so is this process
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):   # SIGKILL, SIGSTOP: no handler to reset
            pass
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)

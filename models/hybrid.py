"""hybrid-N: N threads, each running its own event loop over its share.

seeds/000's threads + asyncio. Thread i takes items i, i+N, i+2N, ... and
runs them as tasks on a new loop; results are put back in item order. The
loop type is part of the name ("hybrid-4" on asyncio, "hybrid-4-uvloop").
"""

import threading
from concurrent.futures import ThreadPoolExecutor

from concbench import schema
from concbench.item_stamps import StampedResults

from .base import Model, positive
from .loops import LoopBarrier, gather_items, run_on_new_loop


class Hybrid(Model):
    family = "hybrid"
    OWNS = r"hybrid(-.*)?"
    PATTERN = r"hybrid-(?P<threads>\d+)(?:-(?P<loop>uvloop))?"
    FORM = "hybrid-N or hybrid-N-uvloop, N >= 1"
    item_side = "async"
    timed = ("creating the threads, one event loop per thread running its "
             "share of the items as tasks, closing the loops, joining the threads")

    def __init__(self, threads, loop="asyncio"):
        self.threads = positive("the number of threads",
                                threads)
        self.loop = loop

    @property
    def name(self):
        return "hybrid-%d%s" % (self.threads, "-uvloop" if self.loop == "uvloop" else "")

    @property
    def concurrency(self):
        return None

    @property
    def parallelism(self):
        return self.threads

    def metadata(self):
        meta = super().metadata()
        meta.update({schema.THREADS: self.threads, schema.LOOP: self.loop})
        return meta

    def libraries(self):
        return ["uvloop"] if self.loop == "uvloop" else []

    def _run_share(self, async_fn, share, barrier):
        try:
            return run_on_new_loop(self.loop, async_fn,
                                   lambda: gather_items(async_fn, share),
                                   len(share), **barrier.callbacks())
        except BaseException:
            barrier.abort()
            raise

    def run(self, sync_fn, async_fn, items, clock=None):
        shares = [items[i::self.threads] for i in range(self.threads)]
        barrier = LoopBarrier(self.threads, clock)
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            futures = [pool.submit(self._run_share, async_fn, share, barrier)
                       for share in shares]
        # A loop that failed broke the barriers for the others: its own
        # exception (a refused connection) is the cause, not their
        # BrokenBarrierError.
        failed = [future.exception() for future in futures if future.exception()]
        cause = next((error for error in failed
                      if not isinstance(error, threading.BrokenBarrierError)), None)
        if cause is not None:
            raise cause
        share_results = [future.result() for future in futures]
        return interleaved(share_results, len(items))


def interleaved(shares, count):
    """Thread i's share back in item order (items i, i+N, ...); stamped
    shares stay so, their stamps zipped after the timed region."""
    every = len(shares)
    results = [None] * count
    for index, share in enumerate(shares):
        results[index::every] = getattr(share, "results", share)
    if not shares or not isinstance(shares[0], StampedResults):
        return results

    def stamps():
        ordered = [None] * count
        for index, share in enumerate(shares):
            ordered[index::every] = list(share.stamps())
        return ordered
    return StampedResults(results, stamps)

"""Which items a model times, when timing each would cost more than a
small share of its batch: one item in so many, picked at random, each
timed exactly (``ItemSampler``), and the batch's results taken apart after the
timed region (``SampledResults``)."""

import math
import random
import statistics
from itertools import cycle

from concbench.item_stamps import StampedResults


class SampledResults(StampedResults):
    """A batch of which only the items at ``positions`` were timed: those
    came back stamped, (result, started, ended), the others as they are.
    Taken apart once, when first read: after the timed region."""

    __slots__ = ("positions", "each")

    def __init__(self, raw, positions):
        super().__init__(raw, self.split)
        self.positions = positions
        self.each = None

    def split(self):
        """Each item's (started, ended), (None, None) where not timed."""
        if self.each is None:
            raw = self.results
            timed = []
            for position in self.positions:
                raw[position], started, ended = raw[position]
                timed.append((position, started, ended))
            self.each = sampled_stamps(len(raw), timed)
        return self.each

    def __iter__(self):
        stamps = self.split()
        for result, (started, ended) in zip(self.results, stamps):
            yield result, started, ended


def sampled_stamps(count, timed):
    """(started, ended) of each of ``count`` items, from the (position,
    started, ended) of those timed; (None, None) for the others."""
    each = [(None, None)] * count
    for position, started, ended in timed:
        each[position] = (started, ended)
    return each


class ItemSampler:
    """Which items a model times, when timing each would cost more than
    ``BUDGET`` of its batch.

    asyncio-serial and uvloop-serial read the clock as each item ends; a
    thread pool's one-item tasks (``threads-N``) call each item through
    the stamped form, whose work the GIL hands from thread to thread. On
    items that do next to nothing either costs more than recording may
    (measured in feee674 and e9b25d7: git show feee674, git show e9b25d7).
    The first batch a process records (a warm-up, unless there are none)
    times every item and measures what one costs. Where that is at least
    ``item_cost / BUDGET`` (20 us under the serial loops, 200 us in a
    thread pool), every item stays timed; below, the process times one
    item in ``every``, fixed for the process so that a slow moment draws
    no more samples than a fast one. The gaps between timed items are random (geometric, from a
    seeded generator), so that a periodic cost, such as a garbage
    collection every so many allocations, is sampled at its true rate."""

    BUDGET = 0.005
    # A clock read and its store, when every item is timed (measured in
    # feee674: git show feee674).
    ITEM_COST = 1e-7
    # What timing one item of a sampled loop adds: two clock reads, their
    # stores, the next gap (measured under asyncio and uvloop in feee674).
    STAMP_COST = 8e-7
    TABLE = 4096

    def __init__(self, seed=0, item_cost=None, stamp_cost=None):
        self.every = 1
        self.gaps = None
        self.seed = seed
        self.learnt = False
        if item_cost is not None:
            self.ITEM_COST = item_cost
        if stamp_cost is not None:
            self.STAMP_COST = stamp_cost

    def learn_from_ends(self, ends):
        """``learn`` from the clock read as each item of a serial loop's
        first batch ended (and once before the first): its median gap is
        one item's cost. A stall of the machine (a throttled CPU, another
        process) lengthens a gap or two, not the median; the batch's mean
        can make cheap items look dear enough that the process times every
        item for good (seen in 656d5da: git show 656d5da). (A pool's items
        end together, a thread's beside another's: their gaps are not their
        cost, and a pool learns from its batch's time.)"""
        gaps = [b - a for a, b in zip(ends, ends[1:])]
        if gaps:
            self.learn(len(gaps), len(gaps) * statistics.median(gaps))

    def learn(self, items, seconds):
        """Set ``every`` from the first batch that timed every item."""
        if self.learnt or items < 1 or seconds <= 0:
            return
        self.learnt = True
        item = seconds / items
        if self.ITEM_COST <= self.BUDGET * item:
            return
        every = self.STAMP_COST / (self.BUDGET * item)
        # A power of two, so that processes of one benchmark mostly agree.
        self.every = max(2, 2 ** round(math.log2(every)))
        self.gaps = cycle(geometric_gaps(self.every, self.TABLE, self.seed))

    def positions(self, count):
        """Positions of the items to time in a batch of ``count``, in
        order, the gaps continuing from the batch before."""
        found = []
        at = -1
        for gap in self.gaps:
            at += gap + 1
            if at >= count:
                return found
            found.append(at)


def geometric_gaps(every, count, seed):
    """``count`` numbers of untimed items between timed ones: each item
    timed with probability 1 / ``every``, independently."""
    rng = random.Random(seed)
    keep = 1.0 / every
    log_skip = math.log1p(-keep)
    return [int(math.log(1.0 - rng.random()) / log_skip) for _ in range(count)]

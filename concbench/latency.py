"""How long each item waited for its result, in every batch of every model.

Every item's function is wrapped (``Stamped``, ``stamp_async``) to return
its result with the moments its call started and ended, read from one
clock, ``time.monotonic`` (CLOCK_MONOTONIC on Linux: one clock for every
process of the machine, so a pool process's stamps compare with the
worker's). An item's latency runs to its result, from when the model took
it up: its own call's start for models that take one item after another
(``Model.latency_from`` "item"), the batch's start for models handed
every item at once (a pool's map, an event loop's tasks: "batch"). In an
open-loop batch (``--rate``) each item is due at a scheduled moment, its
call waits for it, and its latency runs from that moment, whatever the
model was doing then.

A chunked pool hands a chunk's results back together, and a process or
interpreter pool pickles them back: the caller has an item's result only
then, later than the item's call ended. There a closed-loop batch's items
run bare and the caller reads the clock once as each task's results come
(``receive``); an open-loop item keeps its own stamps, and ends no
earlier than it came (``arrived``). A thread's one-item task hands its
result over as it ends: the thread pool calls the stamped form, or,
where items are so cheap that this would cost more than 0.5% of a batch,
for one item in so many, picked at random (``Sampler``).

The event-loop models read the clock themselves instead of awaiting the
wrapped form (``stamp_async``): models that gather tasks once per pass of
the loop, for the items whose done callbacks ran in it; asyncio-serial and
uvloop-serial as each item ends, the next item being taken up then, or
for a sample of items as the thread pool does.

Latencies go into a histogram of buckets 1% wide (HdrHistogram's idea; its
package has no wheels for free-threaded builds, and its C extension would
turn the GIL back on there): any percentile within 0.5% of the truth,
however many items, and the largest kept exactly.
"""

import math
import random
import time
from itertools import cycle

clock = time.monotonic

# Buckets: [FLOOR * RATIO**i, FLOOR * RATIO**(i + 1)).
FLOOR = 1e-7
RATIO = 1.01
_LOG_RATIO = math.log(RATIO)


class _Wrapped:
    """An item's sync form around its function; picklable when the function
    is, so pool processes run it."""

    __slots__ = ("function",)

    def __init__(self, function):
        self.function = function

    def __getstate__(self):
        return self.function

    def __setstate__(self, function):
        self.function = function


class Stamped(_Wrapped):
    """The sync form of an item, returning (result, started, ended)."""

    __slots__ = ()

    def __call__(self, item):
        started = clock()
        result = self.function(item)
        return result, started, clock()


def stamp_async(function):
    """The async form of an item, returning (result, started, ended).

    The event-loop models do not await this form: they find ``function`` as
    its ``stamps_unwrapped`` and read the clock themselves, once per pass
    of the loop (``models.base.gather_items``) or once per item
    (``models.serial``). Where an item does next to nothing
    (``asyncio.sleep(0)``, 2-5 us), a coroutine more per item made the
    batch 12-27% slower. Another model (a plugin's) awaits the form as it
    is."""
    async def stamped(item):
        started = clock()
        result = await function(item)
        return result, started, clock()
    stamped.stamps_unwrapped = function
    return _carried(function, stamped)


class StampedResults:
    """A batch's results with the stamps its model read, zipped into
    (result, started, ended) only when read: after the timed region, so
    that a batch pays for the clock, not for the tuples. ``stamps()``
    gives each item's (started, ended), in item order."""

    __slots__ = ("results", "stamps")

    def __init__(self, results, stamps):
        self.results = results
        self.stamps = stamps

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        for result, (started, ended) in zip(self.results, self.stamps()):
            yield result, started, ended


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


class Sampler:
    """Which items a model times, when timing each would cost more than
    ``BUDGET`` of its batch.

    asyncio-serial and uvloop-serial read the clock as each item ends. An
    ``asyncio.sleep(0)`` item takes 1-3 us there, and a clock read with its
    store 60-100 ns: 3-8% of the batch, above what recording may cost. A
    thread pool's one-item tasks (``threads-N``) call each item through
    the stamped form: on ``time.sleep(0)`` items (30 us a batch's item
    under four threads) that cost 3.2% +- 1.1%, the GIL handing the
    wrapper's work from thread to thread. The first batch a process
    records (a warm-up, unless there are none) times every item and
    measures what one costs. Where that is at least ``item_cost / BUDGET``
    (20 us under the serial loops, 200 us in a thread pool), every item
    stays timed; below, the process times one item in ``every``, fixed for
    the process so that a slow moment draws no more samples than a fast
    one. The gaps between timed items are random (geometric, from a
    seeded generator), so that a periodic cost, such as a garbage
    collection every so many allocations, is sampled at its true rate."""

    BUDGET = 0.005
    # A clock read and its store, when every item is timed (60-100 ns).
    ITEM_COST = 1e-7
    # What timing one item of a sampled loop adds: two clock reads, their
    # stores, the next gap (0.5-1.4 us measured under asyncio and uvloop).
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


def unwrapped(async_fn):
    """(the function, True) for a stamped async form, (async_fn, False)
    for any other: what a model that stamps itself calls."""
    function = getattr(async_fn, "stamps_unwrapped", None)
    return (async_fn, False) if function is None else (function, True)


def _carried(function, wrapper):
    """``wrapper`` with what a model looks up on the async item (its session
    per loop: open_loop, close_loop)."""
    wrapper.__wrapped__ = function
    for name in ("open_loop", "close_loop"):
        if hasattr(function, name):
            setattr(wrapper, name, getattr(function, name))
    return wrapper


class Scheduled(_Wrapped):
    """An open-loop item's sync form: items are (due, item); the call waits
    until its item is due, then runs it: (result, due, ended)."""

    __slots__ = ()

    def __call__(self, due_item):
        due, item = due_item
        wait = due - clock()
        if wait > 0:
            time.sleep(wait)
        result = self.function(item)
        return result, due, clock()


def schedule_async(function):
    """An open-loop item's async form (see ``Scheduled``)."""
    import asyncio

    async def scheduled(due_item):
        due, item = due_item
        wait = due - clock()
        if wait > 0:
            await asyncio.sleep(wait)
        result = await function(item)
        return result, due, clock()
    return _carried(function, scheduled)


class ReceivedResults(StampedResults):
    """A pool's results with the moment each task reached the caller,
    ``size`` items a task (a chunk's results come together): each item's
    end, (None, received)."""

    __slots__ = ("received", "size")

    def __init__(self, results, received, size):
        super().__init__(results, self.ends)
        self.received = received
        self.size = size

    def ends(self):
        received, size = self.received, self.size
        return [(None, received[index // size]) for index in range(len(self.results))]


def receive(tasks, size):
    """Read a pool's ``tasks`` (an iterator over each task's list of up to
    ``size`` results, in item order), stamping each task's arrival."""
    results = []
    received = []
    extend, stamp = results.extend, received.append
    for part in tasks:
        stamp(clock())
        extend(part)
    return ReceivedResults(results, received, size)


def receive_each(results):
    """Read a pool's results one task per item, stamping each arrival."""
    got = []
    received = []
    append, stamp = got.append, received.append
    for result in results:
        append(result)
        stamp(clock())
    return ReceivedResults(got, received, 1)


def arrived(results):
    """A pool's stamped results, as the caller receives them: each one ends
    no earlier than it reached the caller."""
    for result, started, ended in results:
        now = clock()
        yield result, started, max(ended, now)


def is_stamped(function):
    """Whether ``function`` is an item wrapped here (its results stamped)."""
    return isinstance(function, _Wrapped)


def unstamp(stamped):
    """([results], [started], [ended]) of a batch's stamped results."""
    results, started, ended = [], [], []
    for result, start, end in stamped:
        results.append(result)
        started.append(start)
        ended.append(end)
    return results, started, ended


class Histogram:
    """Counts of latencies in buckets 1% wide, and the largest exactly."""

    def __init__(self, counts=None, largest=0.0):
        self.counts = dict(counts or {})
        self.largest = largest

    @property
    def total(self):
        return sum(self.counts.values())

    def add(self, seconds):
        index = bucket(seconds)
        self.counts[index] = self.counts.get(index, 0) + 1
        if seconds > self.largest:
            self.largest = seconds

    def merge(self, other):
        for index, count in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + count
        self.largest = max(self.largest, other.largest)
        return self

    def percentile(self, share):
        """The latency below which ``share`` (0 to 100) of the items fall:
        the middle of its bucket; the largest itself at 100."""
        total = self.total
        if not total:
            return None
        if share >= 100:
            return self.largest
        rank = max(1, math.ceil(share / 100.0 * total))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                return min(self.largest, FLOOR * RATIO ** (index + 0.5))
        return self.largest

    def encode(self):
        """'largest;index:count,...' (what a run's metadata keeps)."""
        return "%r;%s" % (self.largest, ",".join(
            "%d:%d" % (index, count) for index, count in sorted(self.counts.items())))

    @classmethod
    def decode(cls, text):
        """The histogram ``encode`` wrote; ValueError if it is not one."""
        largest, _, pairs = text.partition(";")
        counts = {}
        for pair in filter(None, pairs.split(",")):
            index, count = pair.split(":")
            counts[int(index)] = int(count)
        return cls(counts, float(largest))


def bucket(seconds):
    return int(math.floor(math.log(max(seconds, FLOOR) / FLOOR) / _LOG_RATIO))


def histogram_of(latencies):
    found = Histogram()
    for seconds in latencies:
        found.add(seconds)
    return found

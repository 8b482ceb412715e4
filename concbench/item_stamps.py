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
for one item in so many, picked at random
(``concbench.item_sampling.ItemSampler``).

The event-loop models read the clock themselves instead of awaiting the
wrapped form (``stamp_async``): models that gather tasks once per pass of
the loop, for the items whose done callbacks ran in it; asyncio-serial and
uvloop-serial as each item ends, the next item being taken up then, or
for a sample of items as the thread pool does.

Their latencies go into a histogram (``concbench.histogram``).
"""

import time

clock = time.monotonic

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
    of the loop (``models.loops.gather_items``) or once per item
    (``models.serial``): a coroutine more per item slows a batch of items
    that do next to nothing far beyond what recording may cost (measured
    in 36ee677: git show 36ee677). Another model (a plugin's) awaits the
    form as it is."""
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



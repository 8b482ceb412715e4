"""asyncio-serial: coroutines awaited one after another on an event loop.

The "falsely asynchronous" case of seeds/003: async syntax, sequential
behaviour. Shows what an event loop costs when nothing runs concurrently.
"""

from itertools import islice

from concbench import schema
from concbench.latency import StampedResults, clock, unwrapped

from .base import Model, clock_callbacks, run_on_new_loop


async def await_in_turn(async_fn, items):
    """Results in item order. Stamped ones (result, started, ended) read the
    clock once per item: each item is taken up when the one before it
    ends, the first when the loop is reached."""
    function, stamp = unwrapped(async_fn)
    results = []
    append = results.append
    if not stamp:
        for item in items:
            append(await function(item))
        return results
    ends = [clock()]
    stamp_end = ends.append
    for item in items:
        append(await function(item))
        stamp_end(clock())
    return StampedResults(results, lambda: zip(ends, islice(ends, 1, None)))


class Serial(Model):
    family = "asyncio-serial"
    OWNS = r"(asyncio|uvloop)-serial.*"
    PATTERN = r"(?P<loop>asyncio|uvloop)-serial"
    FORM = "asyncio-serial or uvloop-serial"
    item_side = "async"
    latency_from = "item"
    timed = "creating the event loop, awaiting every item in turn, closing the loop"

    def __init__(self, loop="asyncio"):
        self.loop = loop

    @property
    def name(self):
        return "%s-serial" % self.loop

    def metadata(self):
        meta = super().metadata()
        meta[schema.LOOP] = self.loop
        return meta

    def libraries(self):
        return ["uvloop"] if self.loop == "uvloop" else []

    def run(self, sync_fn, async_fn, items, clock=None):
        return run_on_new_loop(self.loop, async_fn,
                               lambda: await_in_turn(async_fn, items),
                               1, **clock_callbacks(clock))

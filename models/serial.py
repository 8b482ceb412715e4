"""asyncio-serial: coroutines awaited one after another on an event loop.

The "falsely asynchronous" case of seeds/003: async syntax, sequential
behaviour. Shows what an event loop costs when nothing runs concurrently.
"""

from concbench import schema

from .base import Model, clock_callbacks, run_on_new_loop


async def await_in_turn(async_fn, items):
    return [await async_fn(item) for item in items]


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

"""asyncio and uvloop: every item a task on a new event loop, gathered.

The loop type is part of the name ("asyncio" is the standard library's
default loop, "uvloop" is uvloop's); "-limit-C" caps the items in progress
with a semaphore. Creating and closing the loop is inside the timed region.
"""

from concbench import schema

from .base import Model, positive
from .loops import clock_callbacks, gather_items, run_on_new_loop


class Tasks(Model):
    family = "asyncio"
    OWNS = r"(asyncio|uvloop)(-limit.*)?"
    PATTERN = r"(?P<loop>asyncio|uvloop)(?:-limit-(?P<limit>\d+))?"
    FORM = "asyncio, uvloop, asyncio-limit-C or uvloop-limit-C, C >= 1"
    item_side = "async"
    timed = "creating the event loop, running every item as a task, closing the loop"

    def __init__(self, loop="asyncio", limit=None):
        self.loop = loop
        self.limit = None if limit is None else positive(
            "the concurrency limit", limit)

    @property
    def name(self):
        if self.limit is None:
            return self.loop
        return "%s-limit-%d" % (self.loop, self.limit)

    @property
    def concurrency(self):
        return self.limit

    def metadata(self):
        meta = super().metadata()
        meta.update({schema.LOOP: self.loop,
                     schema.CONCURRENCY_LIMIT: self.limit or "none"})
        return meta

    def libraries(self):
        return ["uvloop"] if self.loop == "uvloop" else []

    def run(self, sync_fn, async_fn, items, clock=None):
        concurrency = min(len(items), self.limit or len(items))
        return run_on_new_loop(self.loop, async_fn,
                               lambda: gather_items(async_fn, items, self.limit),
                               concurrency, **clock_callbacks(clock))

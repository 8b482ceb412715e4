"""asyncio-eager and uvloop-eager: every item a task created by the eager
task factory (Python 3.12+), on a new event loop, gathered.

An eager task runs its coroutine at once, in the caller, up to its first
suspension; a coroutine that completes without suspending never goes
through the loop's queue. People adopt it for IO-bound code that often
finishes synchronously (a cache hit). Everything else is the asyncio model.
"""

import asyncio
import sys

from concbench import schema

from .loops import clock_callbacks, gather_items, run_on_new_loop
from .tasks import Tasks


def eager_task_factory(loop, coro, *, eager_start=None, **kwargs):
    """asyncio.eager_task_factory, for uvloop too: uvloop 0.23 passes the
    factory an ``eager_start`` argument that the standard one refuses."""
    return asyncio.Task(coro, loop=loop, eager_start=True, **kwargs)


class Eager(Tasks):
    family = "asyncio-eager"
    OWNS = r"(asyncio|uvloop)-eager.*"
    PATTERN = r"(?P<loop>asyncio|uvloop)-eager"
    FORM = "asyncio-eager or uvloop-eager (Python 3.12+)"
    timed = ("creating the event loop with the eager task factory, running every "
             "item as a task, closing the loop")
    PRESETS = {"default": ["asyncio-eager"], "wide": ["asyncio-eager"]}

    def __init__(self, loop="asyncio"):
        super().__init__(loop)

    @property
    def name(self):
        return "%s-eager" % self.loop

    def metadata(self):
        meta = super().metadata()
        meta[schema.TASK_FACTORY] = "eager (asyncio.Task with eager_start=True)"
        return meta

    def supports(self, workload):
        if sys.version_info < (3, 12):
            return "the eager task factory needs Python 3.12 or later"
        return ""

    def run(self, sync_fn, async_fn, items, clock=None):
        async def eagerly():
            asyncio.get_running_loop().set_task_factory(eager_task_factory)
            return await gather_items(async_fn, items)
        return run_on_new_loop(self.loop, async_fn, eagerly, len(items),
                               **clock_callbacks(clock))

"""asyncio-serial: coroutines awaited one after another on an event loop.

The "falsely asynchronous" case of seeds/003: async syntax, sequential
behaviour. Shows what an event loop costs when nothing runs concurrently.
"""

from itertools import islice

from concbench import schema
from concbench.item_stamps import StampedResults, clock, unwrapped
from concbench.item_sampling import ItemSampler, sampled_stamps

from .base import Model
from .loops import clock_callbacks, run_on_new_loop
from .pools import sampled_labels


async def await_in_turn(async_fn, items, sampler=None):
    """Results in item order. Stamped ones (result, started, ended) read the
    clock once per item: each item is taken up when the one before it
    ends, the first when the loop is reached. Once ``sampler``
    (``concbench.item_sampling.ItemSampler``) has learnt that items are too cheap to
    time each, only the items it picks are timed, from just before their
    call; the others' stamps are None."""
    function, stamp = unwrapped(async_fn)
    results = []
    append = results.append
    if not stamp:
        for item in items:
            append(await function(item))
        return results
    if sampler is not None and sampler.gaps is not None:
        # Inline: a coroutine more would add a frame to every suspension.
        timed = []      # (position, started, ended)
        remaining = iter(items)
        for gap in sampler.gaps:
            for item in islice(remaining, gap):
                append(await function(item))
            for item in remaining:
                started = clock()
                append(await function(item))
                timed.append((len(results) - 1, started, clock()))
                break
            else:
                break
        return StampedResults(results, lambda: sampled_stamps(len(results), timed))
    ends = [clock()]
    stamp_end = ends.append
    for item in items:
        append(await function(item))
        stamp_end(clock())
    def stamps():
        # Read after the timed region, before the next batch: the sampler
        # learns from this batch's ends there, so that the median of its
        # gaps is on no batch's clock (measured in 0d206aa: git show 0d206aa).
        if sampler is not None:
            sampler.learn_from_ends(ends)
        return zip(ends, islice(ends, 1, None))
    return StampedResults(results, stamps)


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
        self.sampler = ItemSampler()

    @property
    def name(self):
        return "%s-serial" % self.loop

    def metadata(self):
        meta = super().metadata()
        meta[schema.LOOP] = self.loop
        return meta

    def run_labels(self):
        return sampled_labels(self.sampler)

    def libraries(self):
        return ["uvloop"] if self.loop == "uvloop" else []

    def run(self, sync_fn, async_fn, items, clock=None):
        return run_on_new_loop(self.loop, async_fn,
                               lambda: await_in_turn(async_fn, items, self.sampler),
                               1, **clock_callbacks(clock))

"""sleep: simulated IO latency with no network (the fake API client of seeds/003).

Each item waits a seeded latency drawn uniformly from
[latency_ms - jitter_ms, latency_ms + jitter_ms]: ``time.sleep`` in the sync
form, ``asyncio.sleep`` in the async form. The result is the item's index, so
a lost, repeated or reordered item shows in the check.
"""

import asyncio
import random
import time

from concbench import schema

from .base import (ITEMS, JITTER_MS, LATENCY_MS, PROCESSES_FULL, RATE, SEED,
                   THREADS_FULL, Workload, preset)


def sleep_item(item):
    index, seconds = item
    time.sleep(seconds)
    return index


async def async_sleep_item(item):
    index, seconds = item
    await asyncio.sleep(seconds)
    return index


# The default preset's sizes, and the wide preset's: its variants at the same sizes.
DEFAULT_SIZES = dict(items=50, latency_ms=20.0, jitter_ms=10.0)


class Sleep(Workload):
    name = "sleep"
    kind = "io"
    OPTIONS = (ITEMS.with_default(50), SEED, LATENCY_MS.with_default(20.0),
               JITTER_MS.with_default(10.0), RATE)
    REPORTED = (schema.ITEMS_PER_BATCH, "latency_ms", "jitter_ms", "rate", "seed")
    PRESETS = {
        "quick": preset(["sequential", "threads-4", "processes-2-chunk-1",
                         "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
                        items=20, latency_ms=5.0, jitter_ms=2.0),
        "default": preset(["sequential", "threads-4", "threads-16", "threads-64",
                           "processes-2-chunk-1", "processes-8-chunk-1",
                           "asyncio", "uvloop", "hybrid-2"],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-4", "threads-16", "threads-64",
                        "threads-16-reuse", "processes-2-chunk-1",
                        "processes-8-chunk-1", "asyncio", "uvloop",
                        "asyncio-limit-8", "uvloop-limit-8", "asyncio-serial",
                        "hybrid-2", "hybrid-4"],
                       **DEFAULT_SIZES),
        # seeds/003: 50 items with random 0 to 0.66 s latency.
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL]
                       + ["threads-64-reuse"]
                       + ["processes-%d-chunk-%d" % (n, c)
                          for c in (1, 5) for n in PROCESSES_FULL]
                       + ["asyncio", "uvloop", "asyncio-limit-8",
                          "uvloop-limit-8", "asyncio-serial", "uvloop-serial"]
                       + ["hybrid-%d" % n for n in (2, 4, 10, 50)]
                       + ["hybrid-4-uvloop"],
                       items=50, latency_ms=330.0, jitter_ms=330.0),
    }

    def __init__(self, **params):
        super().__init__(**params)
        self.check_jitter()

    def make_items(self):
        rnd = random.Random(self.params["seed"])
        return [(index, self.draw_latency_ms(rnd) / 1000.0)
                for index in range(self.params["items"])]

    def sync_function(self):
        return sleep_item

    def async_function(self):
        return async_sleep_item

    def latencies(self, items):
        return [seconds for _, seconds in items]

    def reference(self, items):
        # The result is known without waiting.
        return [index for index, _ in items]

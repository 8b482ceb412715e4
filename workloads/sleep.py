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

from .base import (ITEMS, JITTER_MS, LATENCY_MS, PROCESS_POOL_DEFAULT, PROCESSES_FULL,
                   QUICK, RATE, SEED, THREAD_POOL_DEFAULT, THREADS_FULL, USABLE,
                   Workload, ladder, preset)


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
        "quick": preset(["sequential", "threads-4",
                         ladder("processes-{n}-chunk-1", QUICK, counts=(2,)),
                         "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", USABLE)],
                        items=20, latency_ms=5.0, jitter_ms=2.0),
        # Thread counts follow concurrency, not cores; process pools add
        # the machine's U and 2U usable CPUs (concbench.ladder) to 2 and 8.
        "default": preset(["sequential", "threads-4", "threads-16", "threads-64",
                           ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8), room=3),
                           "asyncio", "uvloop", ladder("hybrid-{n}", USABLE)],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-4", "threads-16", "threads-64",
                        "threads-16-reuse", ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8)),
                        THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT, "asyncio", "uvloop",
                        "asyncio-limit-8", "uvloop-limit-8", "asyncio-serial",
                        ladder("hybrid-{n}", QUICK)],
                       **DEFAULT_SIZES),
        # seeds/003: 50 items with random 0 to 0.66 s latency.
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL]
                       + ["threads-64-reuse"]
                       + [ladder("processes-{n}-chunk-%d" % c, QUICK,
                                 counts=PROCESSES_FULL) for c in (1, 5)]
                       + [THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT]
                       + ["asyncio", "uvloop", "asyncio-limit-8",
                          "uvloop-limit-8", "asyncio-serial", "uvloop-serial"]
                       + [ladder("hybrid-{n}", QUICK, counts=(10, 50))]
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

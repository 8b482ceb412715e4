"""sleep: simulated IO latency with no network (the fake API client of seeds/003).

Each item waits a seeded latency drawn uniformly from
[latency_ms - jitter_ms, latency_ms + jitter_ms]: ``time.sleep`` in the sync
form, ``asyncio.sleep`` in the async form. The result is the item's index, so
a lost, repeated or reordered item shows in the check.
"""

import asyncio
import random
import time

from workloads.base import Workload


def sleep_item(item):
    index, seconds = item
    time.sleep(seconds)
    return index


async def async_sleep_item(item):
    index, seconds = item
    await asyncio.sleep(seconds)
    return index


class Sleep(Workload):
    name = "sleep"
    kind = "io"
    PARAMS = {"items": 50, "seed": 1, "latency_ms": 20.0, "jitter_ms": 10.0}

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

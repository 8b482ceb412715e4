"""encode: pure-Python CPU work that holds the GIL (the experiment of seeds/000).

Each item is a generated URL; the work is the total UTF-8 byte size of its
characters, encoded one character at a time. Query parts start at 26
characters and double up to 1,664, then restart. Queries mix in non-ASCII
characters, so byte sizes differ from lengths and a lost or miscounted
character shows in the total.
"""

import random

from .base import (ALL, DEFAULT, ITEMS, POOL_MAP, PROCESS_POOL_DEFAULT, QUICK, SEED,
                   THREAD_POOL_DEFAULT, USABLE, Workload, ladder, preset)

QUERY_LENGTHS = (26, 52, 104, 208, 416, 832, 1664)
# ASCII letters plus characters of 2, 3 and 4 UTF-8 bytes.
ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
            "\u00e9\u00df\u00f1\u00fc\u4e2d\u6587\u20ac\U0001F600")


def encoded_size(url):
    return sum(len(char.encode("utf-8")) for char in url)


# The default preset's sizes, and the wide preset's: its variants at the same sizes.
DEFAULT_SIZES = dict(items=5_000)


class Encode(Workload):
    name = "encode"
    kind = "cpu"
    OPTIONS = (ITEMS.with_default(5_000), SEED)
    # Worker counts follow the machine's usable CPUs (concbench.ladder): 2
    # and 4 on 2 CPUs; chunks of 125 items at most, fewer where a pool has
    # many workers.
    PRESETS = {
        "quick": preset(["sequential", ladder("threads-{n}", QUICK),
                         ladder("processes-{n}-chunk-{chunk}", QUICK, chunk=50),
                         "asyncio", "uvloop", "asyncio-serial",
                         ladder("hybrid-{n}", USABLE),
                         ladder("interpreters-{n}-chunk-{chunk}", USABLE, chunk=50)],
                        items=700),
        # threads-2-chunk-125 beside threads-2: the per-item cost of a thread
        # pool, which decides much on a free-threaded build.
        "default": preset(["sequential", ladder("threads-{n}", DEFAULT),
                           ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=125),
                           ladder("processes-{n}-chunk-{chunk}", DEFAULT, chunk=125),
                           # What ProcessPoolExecutor() does unasked: one item a task.
                           PROCESS_POOL_DEFAULT,
                           "asyncio", "uvloop",
                           ladder("interpreters-{n}-chunk-{chunk}", USABLE, chunk=125)],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", ladder("threads-{n}", ALL),
                        ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=125),
                        ladder("threads-{n}-reuse", USABLE),
                        ladder("processes-{n}-chunk-{chunk}", ALL, chunk=125),
                        ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=10),
                        ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=POOL_MAP),
                        ladder("processes-{n}-chunk-{chunk}-reuse", USABLE, chunk=125),
                        # A Dask cluster, the step past a process pool.
                        ladder("dask-{n}-chunk-{chunk}", ALL, chunk=125),
                        THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                        "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", QUICK),
                        ladder("interpreters-{n}-chunk-{chunk}", USABLE, chunk=125)],
                       **DEFAULT_SIZES),
        "full": preset(["sequential", ladder("threads-{n}", ALL),
                        ladder("processes-{n}-chunk-{chunk}", ALL, chunk=1000),
                        ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=POOL_MAP),
                        THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                        "asyncio", "uvloop", "asyncio-serial",
                        ladder("hybrid-{n}", ALL, counts=(10,))], items=100_000),
    }
    async_form = "sync item called inside a coroutine"
    # Seeded items and their results, made once per run (concbench.run.inputs).
    shared_inputs = True

    def sync_function(self):
        return encoded_size

    def make_items(self):
        rnd = random.Random(self.params["seed"])
        urls = []
        for index in range(self.params["items"]):
            length = QUERY_LENGTHS[index % len(QUERY_LENGTHS)]
            query = "".join(rnd.choices(ALPHABET, k=length))
            urls.append("https://example.com/item/%d?q=%s" % (index, query))
        return urls

    def reference(self, items):
        # Independent of the per-character loop being measured: the codec
        # encodes the whole string at once, and must agree with it.
        return [len(url.encode("utf-8")) for url in items]

"""encode: pure-Python CPU work that holds the GIL (the experiment of seeds/000).

Each item is a generated URL; the work is the total UTF-8 byte size of its
characters, encoded one character at a time. Query parts start at 26
characters and double up to 1,664, then restart. Queries mix in non-ASCII
characters, so byte sizes differ from lengths and a lost or miscounted
character shows in the total.
"""

import random

from .base import ITEMS, PROCESSES_FULL, SEED, THREADS_FULL, Workload, preset

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
    PRESETS = {
        "quick": preset(["sequential", "threads-2", "processes-2-chunk-50",
                         "asyncio", "uvloop", "asyncio-serial", "hybrid-2",
                         "interpreters-2-chunk-50"],
                        items=700),
        # threads-2-chunk-125 beside threads-2: the per-item cost of a thread
        # pool, which decides much on a free-threaded build.
        "default": preset(["sequential", "threads-2", "threads-2-chunk-125",
                           "threads-4", "processes-2-chunk-125",
                           "processes-4-chunk-125", "asyncio", "uvloop",
                           "interpreters-2-chunk-125"], **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-2", "threads-2-chunk-125",
                        "threads-4", "threads-8",
                        "threads-4-reuse", "processes-1-chunk-125",
                        "processes-2-chunk-125", "processes-4-chunk-125",
                        "processes-2-chunk-10", "processes-2-chunk-125-reuse",
                        "asyncio", "uvloop", "asyncio-serial", "hybrid-2",
                        "hybrid-4", "interpreters-2-chunk-125"], **DEFAULT_SIZES),
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL[:5]]
                       + ["processes-%d-chunk-1000" % n for n in PROCESSES_FULL]
                       + ["asyncio", "uvloop", "asyncio-serial"]
                       + ["hybrid-%d" % n for n in (2, 4, 10)], items=100_000),
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

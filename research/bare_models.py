"""The same work as bench.py's encode rows, run by a script as a user writes
it: no harness around the batches (no fork, no pinning, no sampler, no
probe, no garbage-collector settings, no priming). What it prints is the
truth the harness must leave as it is (tests/test_transparency.py).

    python research/bare_models.py --items 1000 --rounds 5 MODEL ...

Each round runs, for each model, a sequential batch and the model's batch
one after the other (the order alternating between rounds). Prints one
JSON object: {model: [[sequential seconds, the model's seconds] per
round]}. ``--freeze`` freezes the heap first, as a harness once did
(gc.freeze(), which on a free-threaded 3.13 keeps the frozen functions
from being made immortal when the first thread starts).
"""

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import random
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from concbench.workloads.encode import Encode, encoded_size  # noqa: E402

CHUNK = 125


def sequential(items):
    return [encoded_size(item) for item in items]


def map_chunk(chunk):
    return [encoded_size(item) for item in chunk]


def threads_chunked(items):
    """threads-2-chunk-125: a fresh pool, one task per chunk."""
    chunks = [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]
    with ThreadPoolExecutor(2) as pool:
        return [size for part in pool.map(map_chunk, chunks) for size in part]


def processes_chunked(items):
    """processes-2-chunk-125: a fresh forked pool, map's own chunks."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(encoded_size, items, chunksize=CHUNK))


async def one(item):
    return encoded_size(item)


async def gather(items):
    """Every item a task, awaited in order (asyncio.gather's handling of
    its arguments costs a batch of such items 5-15%: not the model's)."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(one(item)) for item in items]
    return [await task for task in tasks]


def tasks(items):
    """asyncio: every item a task on a new loop."""
    return asyncio.run(gather(items))


def hybrid(items):
    """hybrid-2: two threads, each running a loop over every other item."""
    shares = [items[0::2], items[1::2]]
    results = [None, None]

    def run(index):
        results[index] = asyncio.run(gather(shares[index]))
    workers = [threading.Thread(target=run, args=(index,)) for index in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    merged = [None] * len(items)
    merged[0::2], merged[1::2] = results
    return merged


MODELS = {"threads-2-chunk-125": threads_chunked,
          "processes-2-chunk-125": processes_chunked,
          "asyncio": tasks, "hybrid-2": hybrid}


def timed(function, items, expected):
    # A pause of random length first, so that batches do not lock onto the
    # period of a CPU quota: under a 1-CPU quota beside a busy process, a
    # round of 25 ms clear and 75 ms throttled lasts one 100 ms period,
    # and the next round started in the same phase of it.
    time.sleep(random.uniform(0, 0.02))
    started = time.perf_counter()
    results = function(items)
    seconds = time.perf_counter() - started
    if results != expected:
        raise SystemExit("%s: wrong results" % function.__name__)
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--freeze", action="store_true")
    parser.add_argument("models", nargs="+", choices=sorted(MODELS))
    args = parser.parse_args()
    items = Encode(items=args.items).make_items()
    expected = [len(item.encode("utf-8")) for item in items]
    if args.freeze:
        gc.collect()
        gc.freeze()
    pairs = {name: [] for name in args.models}
    for round_ in range(args.rounds):
        for name in args.models:
            pair = [sequential, MODELS[name]]
            if round_ % 2:
                pair.reverse()
            seconds = {f: timed(f, items, expected) for f in pair}
            pairs[name].append((seconds[sequential], seconds[MODELS[name]]))
    print(json.dumps(pairs))


if __name__ == "__main__":
    main()

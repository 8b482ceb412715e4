"""Chunks of items for pools that have no chunksize of their own.

ThreadPoolExecutor.map and InterpreterPoolExecutor.map accept a chunksize
and ignore it (only ProcessPoolExecutor uses it), so a chunked thread or
interpreter pool submits one call per chunk itself. This module imports
nothing: an interpreter pool unpickles ``map_chunk`` in every interpreter.
"""


def map_chunk(fn, chunk):
    """Results of ``fn`` over one chunk, in order (the task a pool runs)."""
    return [fn(item) for item in chunk]


def chunked(items, size):
    items = list(items)
    return [items[start:start + size] for start in range(0, len(items), size)]


def map_chunks(pool, fn, items, size, timeout=None, received=None):
    """Every item's result, in item order, from tasks of ``size`` items;
    ``received``, if given, passes over each chunk's results as it comes."""
    parts = chunked(items, size)
    results = []
    for part in pool.map(map_chunk, [fn] * len(parts), parts, timeout=timeout):
        results.extend(received(part) if received else part)
    return results

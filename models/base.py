"""The contract every concurrency model fulfils, and the event-loop helper.

A model knows how to run a batch of items; it never looks inside them. It
receives a picklable sync function, a coroutine function and the items, and
returns one result per item, in item order. It also states, in the
benchmark's metadata, what the report needs to know of it (how many items it
keeps in progress, how many can compute at once, in how many interpreters,
which form of the item it calls), so that the report names no model.
"""

import asyncio
import re
import threading
import time

from concbench import schema
from concbench.latency import arrived, is_stamped
from concbench.latency import clock as latency_clock

from .chunks import map_chunks


class ModelError(ValueError):
    """A model name that does not parse, or parameters out of range."""


class Model:
    family = ""
    # OWNS matches every name of the family, malformed ones included; PATTERN
    # matches the well-formed ones, whose named groups go to __init__; FORM
    # describes them for error messages.
    OWNS = None
    PATTERN = None
    FORM = ""
    # What the timed region holds; recorded in metadata and in docs/models.md.
    timed = "the model's run() over every item of the batch"
    # Which form of the item the model calls ("sync" or "async"), and
    # whether items run in other processes than the one that prepared them.
    item_side = "sync"
    runs_in_subprocesses = False
    # True for the model every other model of a workload is compared with.
    is_reference = False
    # Where an item's latency starts (concbench.latency): "item", its own
    # call, for models that take one item after another; "batch", the
    # batch's start, for models handed every item at once.
    latency_from = "batch"
    # Preset name -> model names of this family that join every workload's
    # list in that preset (a workload's own lists are in its PRESETS).
    PRESETS = {}

    @classmethod
    def parse(cls, name):
        """Return a model for ``name``, None if it is another family's name.

        Raise ModelError when the name is of this family but malformed.
        """
        if not re.fullmatch(cls.OWNS, name):
            return None
        match = re.fullmatch(cls.PATTERN, name)
        if match is None:
            raise ModelError("model %r: expected %s" % (name, cls.FORM))
        try:
            return cls(**{key: value for key, value in match.groupdict().items()
                          if value is not None})
        except ModelError as exc:
            raise ModelError("model %r: %s" % (name, exc)) from None

    @property
    def name(self):
        raise NotImplementedError

    @property
    def concurrency(self):
        """How many items can be in progress at once (None: unbounded)."""
        return 1

    @property
    def parallelism(self):
        """How many items can compute at once when they release the GIL."""
        return 1

    @property
    def interpreters(self):
        """How many interpreters, each with its own GIL, run items."""
        return 1

    def scaling(self):
        """(what is counted, in the plural and singular, the series' label)
        when the model is one point of a series that varies only its
        parallelism (threads-2, threads-4, ...), else None."""
        return None

    def in_flight(self, items):
        """The most items in progress at once in a batch of ``items``."""
        return min(items, self.concurrency or items)

    def supports(self, workload):
        """Why this model cannot run ``workload`` ("" if it can)."""
        return ""

    def metadata(self):
        meta = {schema.MODEL: self.name, schema.MODEL_FAMILY: self.family,
                schema.TIMED: self.timed, schema.ITEM_SIDE: self.item_side,
                schema.LATENCY_FROM: self.latency_from,
                schema.CONCURRENCY: self.concurrency or "unbounded",
                schema.PARALLELISM: self.parallelism,
                schema.INTERPRETERS: self.interpreters}
        scaling = self.scaling()
        if scaling:
            meta[schema.SCALING], meta[schema.SCALING_UNIT], series = scaling
            if series:
                meta[schema.SCALING_SERIES] = series
        return meta

    def libraries(self):
        return []

    def run_labels(self):
        """Words about the batch just run that only running it tells (which
        GIL a pool's interpreters had), for the run's metadata."""
        return {}

    def open(self):
        """Create what outlives a batch (a reused pool); not timed."""

    def close(self):
        """Release what open() created."""

    def run(self, sync_fn, async_fn, items, clock=None):
        """Results of every item, in item order. ``clock`` is the batch's
        BatchClock: only models that run event loops touch it."""
        raise NotImplementedError


class BatchClock:
    """The timed region of one batch.

    time_batches starts it just before Model.run and stops it just after. An
    event-loop model whose async item keeps resources per loop (``open_loop``:
    pooled database connections) restarts it once every loop has opened them,
    and stops it before they close, so that they stay outside the timed
    region as the workload promises.
    """

    def __init__(self):
        self.began = latency_clock()    # where a "batch" item latency starts
        self.started = time.perf_counter()
        self.stopped = None

    def restart(self):
        self.began = latency_clock()
        self.started = time.perf_counter()

    def stop(self):
        if self.stopped is None:
            self.stopped = time.perf_counter()

    @property
    def elapsed(self):
        return self.stopped - self.started


class PoolModel(Model):
    """A model that maps items on an executor, fresh per batch or reused.

    With the default lifetime ("fresh") each batch creates and shuts down its
    pool, as a script does; "reuse" keeps one pool, created outside the timed
    region, for all batches of a worker.
    """

    pool_kind = ""
    # Thread and interpreter pools map tasks of ``chunk`` items themselves
    # (None: one task per item); process pools pass it as map's chunksize.
    chunk = None

    def __init__(self, lifetime="fresh"):
        self.lifetime = lifetime
        self._pool = None

    def pool_name(self, family, workers):
        """family-N[-chunk-C][-reuse]."""
        name = "%s-%d" % (family, workers)
        if self.chunk is not None:
            name += "-chunk-%d" % self.chunk
        if self.lifetime == "reuse":
            name += "-reuse"
        return name

    def chunk_series(self, counted, unit):
        """scaling() of a fresh pool: one series per chunk size."""
        if self.lifetime != "fresh":
            return None
        return (counted, unit, "" if self.chunk is None else "chunk %d" % self.chunk)

    @property
    def timed(self):
        if self.lifetime == "reuse":
            return "mapping every item on a pool created before the timed batches"
        return ("creating the %s pool, mapping every item, shutting the pool down"
                % self.pool_kind)

    def metadata(self):
        meta = super().metadata()
        meta[schema.POOL_LIFETIME] = self.lifetime
        if self.chunk is not None:
            meta[schema.CHUNK_SIZE] = self.chunk
        return meta

    @property
    def concurrency(self):
        return self.parallelism

    def new_pool(self):
        raise NotImplementedError

    def map(self, pool, sync_fn, items):
        """Results in item order; stamped ones end no earlier than this
        thread received them (a chunk's all at once)."""
        received = arrived if is_stamped(sync_fn) else None
        if self.chunk is None:
            results = pool.map(sync_fn, items)
            return list(received(results) if received else results)
        return map_chunks(pool, sync_fn, items, self.chunk, received=received)

    def open(self):
        if self.lifetime == "reuse":
            self._pool = self.new_pool()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def run(self, sync_fn, async_fn, items, clock=None):
        if self._pool is not None:
            return self.map(self._pool, sync_fn, items)
        with self.new_pool() as pool:
            return self.map(pool, sync_fn, items)


def positive(what, value):
    value = int(value)
    if value < 1:
        raise ModelError("%s must be at least 1, not %d" % (what, value))
    return value


def new_loop(loop):
    if loop == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run_on_new_loop(loop, async_fn, main, concurrency=1, ready=None, done=None):
    """Run ``main()`` on a new event loop of kind ``loop`` and close it.

    Mirrors asyncio.run() (remaining tasks cancelled, async generators and the
    default executor shut down) for both loop kinds, on every Python version.
    If ``async_fn`` has a ``close_loop`` coroutine method (a client session
    opened per loop), it is awaited after ``main()``, on the same loop. If it
    has an ``open_loop(concurrency)`` coroutine method, that is awaited first,
    then ``ready()`` is called; ``done()`` is called when ``main()`` is over:
    the model's way to keep what open_loop opens out of the timed region.
    """
    open_loop = getattr(async_fn, "open_loop", None)
    close_loop = getattr(async_fn, "close_loop", None)

    async def main_then_close():
        try:
            if open_loop is not None:
                await open_loop(concurrency)
                if ready is not None:
                    ready()
            result = await main()
            if open_loop is not None and done is not None:
                done()
            return result
        finally:
            if close_loop is not None:
                await close_loop()

    event_loop = new_loop(loop)
    try:
        asyncio.set_event_loop(event_loop)
        return event_loop.run_until_complete(main_then_close())
    finally:
        try:
            pending = asyncio.all_tasks(event_loop)
            for task in pending:
                task.cancel()
            if pending:
                event_loop.run_until_complete(
                    asyncio.gather(*pending, return_exceptions=True))
            event_loop.run_until_complete(event_loop.shutdown_asyncgens())
            event_loop.run_until_complete(event_loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            event_loop.close()


def clock_callbacks(clock):
    """run_on_new_loop's ready and done for a model with one event loop."""
    if clock is None:
        return {}
    return {"ready": clock.restart, "done": clock.stop}


class LoopBarrier:
    """ready and done for several loops in threads: the clock restarts when
    every loop is ready and stops when every loop is done. A loop that fails
    breaks the barriers, so that the others raise instead of waiting."""

    def __init__(self, parties, clock):
        self.ready_barrier = threading.Barrier(
            parties, action=clock.restart if clock else None)
        self.done_barrier = threading.Barrier(
            parties, action=clock.stop if clock else None)

    def callbacks(self):
        return {"ready": self.ready_barrier.wait, "done": self.done_barrier.wait}

    def abort(self):
        self.ready_barrier.abort()
        self.done_barrier.abort()


async def gather_items(async_fn, items, limit=None):
    """Every item a task; at most ``limit`` in progress when one is given."""
    if limit is None:
        return await asyncio.gather(*(async_fn(item) for item in items))
    semaphore = asyncio.Semaphore(limit)

    async def limited(item):
        async with semaphore:
            return await async_fn(item)
    return await asyncio.gather(*(limited(item) for item in items))

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
from concbench.latency import (Stamped, StampedResults, arrived, is_stamped, receive,
                               receive_each, unwrapped)
from concbench.latency import clock as latency_clock

from .chunks import chunked, map_chunk, map_chunks


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
    # Whether a task's result reaches the caller later than the task ends
    # (pickled back from another interpreter or process), so that each
    # result is stamped again as the caller receives it. A thread's task
    # hands its result over as it ends; the caller reading them in item
    # order, one by one, made a batch of sleep(0) items 4-6% slower.
    results_travel = True

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
        thread received them where results travel, and a chunk's all at
        once, when its task ends.

        There, the caller's receipt is every item's end, later than its
        call's own: a closed-loop batch's items (``Stamped``, whose
        latency runs from the batch's start) run bare, and this thread
        reads the clock once per task (a chunk's items each stamped cost
        a batch of encode's 2-2.5%). An open-loop item (``Scheduled``)
        waits for its schedule in the pool and keeps its own stamps."""
        if type(sync_fn) is Stamped and (self.results_travel or self.chunk is not None):
            return self.map_received(pool, sync_fn.function, items)
        return self.map_each(pool, sync_fn, items)

    def map_each(self, pool, sync_fn, items):
        """Results of ``sync_fn`` as it is, each stamped one ending no
        earlier than received where results travel."""
        received = arrived if is_stamped(sync_fn) else None
        if self.chunk is None:
            results = pool.map(sync_fn, items)
            if received and self.results_travel:
                results = received(results)
            return list(results)
        return map_chunks(pool, sync_fn, items, self.chunk, received=received)

    def map_received(self, pool, function, items):
        """Results of the bare ``function``, stamped as each task reaches
        this thread (``concbench.latency.ReceivedResults``)."""
        if self.chunk is None:
            return receive_each(pool.map(function, items))
        parts = chunked(items, self.chunk)
        return receive(pool.map(map_chunk, [function] * len(parts), parts), self.chunk)

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


def sampled_labels(sampler):
    """run_labels() of a model that times a sample of its items
    (``concbench.latency.Sampler``): the share, if not all."""
    every = sampler.every
    return {schema.LATENCY_EVERY: every} if every > 1 else {}


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
    """Every item a task, at most ``limit`` in progress when one is given;
    their results in item order, stamped (result, None, ended) when the
    item form is (``concbench.latency.stamp_async``, ``StampedResults``).

    Each task gets one done callback, which counts it, as asyncio.gather
    and TaskGroup do per task, without gather's handling of its arguments
    (which costs 5-15% of a batch of items that do next to nothing). The
    first item to raise (or be cancelled) ends the batch with its
    exception, as gather's does.

    The loop runs the done callbacks a pass at a time: an item's end is the
    end of the pass whose callback received it, read once per pass when the
    next pass begins (a clock read per item cost 2-3% of a batch of
    ``asyncio.sleep(0)`` items, once per pass nothing measurable). An eager
    task that completed as it was created is received, and stamped, then."""
    function, stamp = unwrapped(async_fn)
    if limit is None:
        coroutines = [function(item) for item in items]
    else:
        semaphore = asyncio.Semaphore(limit)

        async def limited(item):
            async with semaphore:
                return await function(item)
        coroutines = [limited(item) for item in items]
    if not coroutines:      # hybrid's share when it has more threads than items
        return StampedResults([], tuple) if stamp else []
    loop = asyncio.get_running_loop()
    gathered = loop.create_future()
    remaining = len(coroutines)
    ended = {}          # a task that completed as it was created: its end
    passes = []         # (a pass's end, the tasks its callbacks received)
    receiving = None    # the tasks received in the pass under way

    def end_pass(tasks):
        nonlocal receiving
        passes.append((latency_clock(), tasks))
        receiving = None

    def count(task):
        nonlocal remaining
        if gathered.done():
            if not task.cancelled():
                task.exception()        # retrieved, as gather retrieves it
        elif task.cancelled():
            gathered.set_exception(asyncio.CancelledError())
        elif task.exception() is not None:
            gathered.set_exception(task.exception())
        else:
            remaining -= 1
            if not remaining:
                gathered.set_result(None)

    def received(task):
        nonlocal receiving
        if stamp:
            if receiving is None:
                receiving = []
                loop.call_soon(end_pass, receiving)
            receiving.append(task)
        count(task)

    tasks = []
    for coroutine in coroutines:
        task = loop.create_task(coroutine)
        tasks.append(task)
        if task.done():
            if stamp:
                ended[task] = latency_clock()
            count(task)
        else:
            task.add_done_callback(received)
    try:
        await gathered
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        raise
    if receiving is not None:
        end_pass(receiving)
    results = [task.result() for task in tasks]
    if not stamp:
        return results

    def stamps():
        for end, received_then in passes:
            for task in received_then:
                ended[task] = end
        return ((None, ended[task]) for task in tasks)
    return StampedResults(results, stamps)

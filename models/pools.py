"""Models that map items on an executor (threads, processes, interpreters):
a pool fresh per batch, as a script makes one, or one reused by every batch
of a worker, made outside the timed region; its items mapped one at a time
or in chunks, their results received as each task's come back."""

import time

from concbench import schema
from concbench.item_stamps import Stamped, arrived, is_stamped, receive, receive_each

from .base import Model
from .chunks import chunked, map_chunk, map_chunks


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
    # hands its result over as it ends, so thread pools spare the caller
    # that pass over the results, which slows a batch of cheap items
    # (measured in 36ee677: git show 36ee677).
    results_travel = True

    # What the standard library's executor of this kind is called unasked:
    # a "-default" model's size is the one it would pick (concbench.run.ladder).
    stdlib_executor = ""

    def __init__(self, lifetime="fresh", default=None):
        self.lifetime = lifetime
        # "-default": the count is the standard library's default on the
        # machine that ran it, a label only: the pool runs as the same count
        # named outright does.
        self.stdlib_default = bool(default)
        self._pool = None

    def pool_name(self, family, workers):
        """family-N[-chunk-C][-reuse]."""
        name = "%s-%d" % (family, workers)
        if self.chunk is not None:
            name += "-chunk-%d" % self.chunk
        if self.lifetime == "reuse":
            name += "-reuse"
        return name

    def default_suffix(self):
        return "-default" if self.stdlib_default else ""

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
        if self.stdlib_default:
            meta[schema.STDLIB_DEFAULT] = "%s()" % self.stdlib_executor
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
        reads the clock once per task, cheaper than stamping each item of
        a chunk (measured in e9b25d7: git show e9b25d7). An open-loop item
        (``Scheduled``) waits for its schedule in the pool and keeps its
        own stamps."""
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
        this thread (``concbench.item_stamps.ReceivedResults``)."""
        if self.chunk is None:
            return receive_each(pool.map(function, items))
        parts = chunked(items, self.chunk)
        return receive(pool.map(map_chunk, [function] * len(parts), parts), self.chunk)

    def open(self):
        if self.lifetime == "reuse":
            self._pool = self.new_pool()
            # Executors start a worker as a task finds none idle: a reused
            # pool's would start on the first batch's clock. A task per
            # worker, each holding its worker for 50 ms, starts them all.
            for task in [self._pool.submit(time.sleep, 0.05)
                         for _ in range(self.parallelism)]:
                task.result()

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
    (``concbench.item_sampling.ItemSampler``): the share, if not all."""
    every = sampler.every
    return {schema.LATENCY_EVERY: every} if every > 1 else {}

"""processes-N-chunk-C: a ProcessPoolExecutor with N workers, C items per task.

The start method is part of the name when it is not the default ("fork" on
Linux, "spawn" elsewhere: fixed here rather than left to the interpreter,
whose default changes between versions, so that names mean the same work on
every version). Items and results travel between processes by pickling, a
cost this model really has.
"""

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

from models.base import Model, ModelError, positive

START_METHODS = ("fork", "forkserver", "spawn")
DEFAULT_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


class Processes(Model):
    family = "processes"
    OWNS = r"processes(-.*)?"
    PATTERN = (r"processes-(?P<processes>\d+)(?:-chunk-(?P<chunk>\d+))?"
               r"(?:-(?P<lifetime>reuse))?(?:-(?P<start_method>fork|forkserver|spawn))?")
    FORM = ("processes-N-chunk-C[-reuse][-fork|-forkserver|-spawn], "
            "N >= 1 and C >= 1")

    def __init__(self, processes, chunk=1, lifetime="fresh",
                 start_method=DEFAULT_START_METHOD):
        self.nprocesses = positive("the number of processes", processes)
        self.chunk = positive("the chunk size", chunk)
        self.lifetime = lifetime
        if start_method not in multiprocessing.get_all_start_methods():
            raise ModelError("start method %r is not available here" % start_method)
        self.start_method = start_method
        self._pool = None

    @property
    def name(self):
        name = "processes-%d-chunk-%d" % (self.nprocesses, self.chunk)
        if self.lifetime == "reuse":
            name += "-reuse"
        if self.start_method != DEFAULT_START_METHOD:
            name += "-" + self.start_method
        return name

    @property
    def workers(self):
        return self.nprocesses

    @property
    def processes(self):
        return self.nprocesses

    @property
    def timed(self):
        if self.lifetime == "reuse":
            return "mapping every item on a pool created before the timed batches"
        return ("creating the process pool, mapping every item, "
                "shutting the pool down")

    def metadata(self):
        meta = super().metadata()
        meta.update(processes=self.nprocesses, chunk_size=self.chunk,
                    start_method=self.start_method, pool_lifetime=self.lifetime)
        return meta

    def _new_pool(self):
        context = multiprocessing.get_context(self.start_method)
        return ProcessPoolExecutor(max_workers=self.nprocesses, mp_context=context)

    def open(self):
        if self.lifetime == "reuse":
            self._pool = self._new_pool()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def run(self, sync_fn, async_fn, items):
        if self._pool is not None:
            return list(self._pool.map(sync_fn, items, chunksize=self.chunk))
        with self._new_pool() as pool:
            return list(pool.map(sync_fn, items, chunksize=self.chunk))

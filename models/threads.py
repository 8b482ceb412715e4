"""threads-N[-chunk-C]: a ThreadPoolExecutor with N workers, C items per task.

With the default pool lifetime ("fresh") each batch creates and shuts down
its pool, as a script does; "-reuse" keeps one pool across batches
(seeds/001's threads-recreate against threads-reuse).

Without a chunk, each item is one task (Executor.map: a future, a lock and a
queue operation per item). On a free-threaded build that per-item cost,
contended across threads, decides much of whether threads scale for
pure-Python work; "-chunk-C" maps tasks of C items, as the process models
do, so the suite shows both.
"""

from concurrent.futures import ThreadPoolExecutor

from concbench import schema

from .base import PoolModel, positive


class Threads(PoolModel):
    family = "threads"
    OWNS = r"threads(-.*)?"
    PATTERN = (r"threads-(?P<threads>\d+)(?:-chunk-(?P<chunk>\d+))?"
               r"(?:-(?P<lifetime>reuse))?")
    FORM = "threads-N[-chunk-C][-reuse], N >= 1 and C >= 1"
    pool_kind = "thread"
    results_travel = False

    def __init__(self, threads, chunk=None, lifetime="fresh"):
        super().__init__(lifetime)
        self.threads = positive("the number of threads", threads)
        self.chunk = None if chunk is None else positive("the chunk size", chunk)

    @property
    def name(self):
        return self.pool_name("threads", self.threads)

    @property
    def parallelism(self):
        return self.threads

    def scaling(self):
        return self.chunk_series("threads", "thread")

    def metadata(self):
        meta = super().metadata()
        meta[schema.THREADS] = self.threads
        return meta

    def new_pool(self):
        return ThreadPoolExecutor(max_workers=self.threads)

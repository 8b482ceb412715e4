"""threads-N: a ThreadPoolExecutor with N workers mapping the sync item.

With the default pool lifetime ("fresh") each batch creates and shuts down
its pool, as a script does; "-reuse" keeps one pool across batches
(seeds/001's threads-recreate against threads-reuse).
"""

from concurrent.futures import ThreadPoolExecutor

from models.base import Model, positive


class Threads(Model):
    family = "threads"
    OWNS = r"threads(-.*)?"
    PATTERN = r"threads-(?P<threads>\d+)(?:-(?P<lifetime>reuse))?"
    FORM = "threads-N or threads-N-reuse, N >= 1"

    def __init__(self, threads, lifetime="fresh"):
        self.threads = positive("the number of threads",
                                threads)
        self.lifetime = lifetime
        self._pool = None

    @property
    def name(self):
        suffix = "-reuse" if self.lifetime == "reuse" else ""
        return "threads-%d%s" % (self.threads, suffix)

    @property
    def workers(self):
        return self.threads

    @property
    def timed(self):
        if self.lifetime == "reuse":
            return "mapping every item on a pool created before the timed batches"
        return "creating the thread pool, mapping every item, shutting the pool down"

    def metadata(self):
        meta = super().metadata()
        meta.update(threads=self.threads, pool_lifetime=self.lifetime)
        return meta

    def open(self):
        if self.lifetime == "reuse":
            self._pool = ThreadPoolExecutor(max_workers=self.threads)

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def run(self, sync_fn, async_fn, items):
        if self._pool is not None:
            return list(self._pool.map(sync_fn, items))
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            return list(pool.map(sync_fn, items))

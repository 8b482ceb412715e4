"""threads-N: a ThreadPoolExecutor with N workers mapping the sync item.

With the default pool lifetime ("fresh") each batch creates and shuts down
its pool, as a script does; "-reuse" keeps one pool across batches
(seeds/001's threads-recreate against threads-reuse).
"""

from concurrent.futures import ThreadPoolExecutor

from .base import PoolModel, positive


class Threads(PoolModel):
    family = "threads"
    OWNS = r"threads(-.*)?"
    PATTERN = r"threads-(?P<threads>\d+)(?:-(?P<lifetime>reuse))?"
    FORM = "threads-N or threads-N-reuse, N >= 1"
    pool_kind = "thread"

    def __init__(self, threads, lifetime="fresh"):
        super().__init__(lifetime)
        self.threads = positive("the number of threads", threads)

    @property
    def name(self):
        suffix = "-reuse" if self.lifetime == "reuse" else ""
        return "threads-%d%s" % (self.threads, suffix)

    @property
    def parallelism(self):
        return self.threads

    def scaling(self):
        if self.lifetime == "fresh":
            return ("threads", "thread", "")
        return None

    def metadata(self):
        meta = super().metadata()
        meta["threads"] = self.threads
        return meta

    def new_pool(self):
        return ThreadPoolExecutor(max_workers=self.threads)

"""threads-N[-chunk-C]: a ThreadPoolExecutor with N workers, C items per task.

With the default pool lifetime ("fresh") each batch creates and shuts down
its pool, as a script does; "-reuse" keeps one pool across batches
(seeds/001's threads-recreate against threads-reuse).

Without a chunk, each item is one task (Executor.map: a future, a lock and a
queue operation per item). On a free-threaded build that per-item cost,
contended across threads, decides much of whether threads scale for
pure-Python work; "-chunk-C" maps tasks of C items, as the process models
do, so the suite shows both.

Where one-item tasks are too cheap to time each (``concbench.item_sampling.ItemSampler``),
the pool maps ``operator.call`` over the items and a function for each,
the stamped form for the items picked, the bare one for the others: the
same tasks as ``Executor.map`` of the one function, and no measurably
dearer (measured in e9b25d7: git show e9b25d7). Python 3.10 has no
``operator.call``: a function of two lines stands in for it, a frame more
per item.
"""

import operator
from concurrent.futures import ThreadPoolExecutor

from concbench import schema
from concbench.item_stamps import Stamped, clock
from concbench.item_sampling import ItemSampler, SampledResults

from .base import positive
from .pools import PoolModel, sampled_labels



def _call_py310(function, item):
    return function(item)


# operator.call is new in 3.11.
_call = getattr(operator, "call", _call_py310)
# The ItemSampler's costs of one-item thread tasks, in seconds: the
# stamped form per item when every item is timed (dearer than a clock read
# alone, as the GIL hands its work between threads), and a timed item of a
# sampled batch, about twice that (measured on time.sleep(0) items under
# threads-4 in e9b25d7: git show e9b25d7).
THREAD_ITEM_COST = 1e-6
THREAD_TIMED_COST = 2e-6


class Threads(PoolModel):
    family = "threads"
    OWNS = r"threads(-.*)?"
    PATTERN = (r"threads-(?P<threads>\d+)(?:-chunk-(?P<chunk>\d+))?"
               r"(?:-(?P<lifetime>reuse))?(?:-(?P<default>default))?")
    FORM = ("threads-N[-chunk-C][-reuse][-default], N >= 1 and C >= 1 (-default: "
            "N is ThreadPoolExecutor()'s size on the machine that ran it)")
    pool_kind = "thread"
    stdlib_executor = "ThreadPoolExecutor"
    results_travel = False

    def __init__(self, threads, chunk=None, lifetime="fresh", default=None):
        super().__init__(lifetime, default)
        self.threads = positive("the number of threads", threads)
        self.chunk = None if chunk is None else positive("the chunk size", chunk)
        self.sampler = ItemSampler(item_cost=THREAD_ITEM_COST, stamp_cost=THREAD_TIMED_COST)

    @property
    def name(self):
        return self.pool_name("threads", self.threads) + self.default_suffix()

    @property
    def parallelism(self):
        return self.threads

    def scaling(self):
        return self.chunk_series("threads", "thread")

    def metadata(self):
        meta = super().metadata()
        meta[schema.THREADS] = self.threads
        return meta

    def run_labels(self):
        return sampled_labels(self.sampler)

    def map(self, pool, sync_fn, items):
        """One task per item, stamped ones timed all until the sampler has
        learnt what one costs, then those it picks only."""
        if self.chunk is not None or type(sync_fn) is not Stamped:
            return super().map(pool, sync_fn, items)
        sampler = self.sampler
        if sampler.gaps is None:
            began = clock()
            results = list(pool.map(sync_fn, items))
            sampler.learn(len(results), clock() - began)
            return results
        positions = sampler.positions(len(items))
        functions = [sync_fn.function] * len(items)
        for position in positions:
            functions[position] = sync_fn
        return SampledResults(list(pool.map(_call, functions, items)), positions)

    def new_pool(self):
        return ThreadPoolExecutor(max_workers=self.threads)

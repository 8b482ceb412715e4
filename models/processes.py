"""processes-N-chunk-C: a ProcessPoolExecutor with N workers, C items per task.

The start method is part of the name when it is not the default ("fork" on
Linux, "spawn" elsewhere: fixed here rather than left to the interpreter,
whose default changes between versions, so that names mean the same work on
every version). Items and results travel between processes by pickling, a
cost this model really has.
"""

import importlib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from itertools import islice

from concbench import schema
from concbench.item_stamps import arrived, is_stamped, receive, receive_each
from concbench.run.lifeline import pool_initializer

from .base import ModelError, positive
from .pools import PoolModel

DEFAULT_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"
# The module that starts a pool's processes, by start method.
POPEN = {"fork": "multiprocessing.popen_fork",
         "forkserver": "multiprocessing.popen_forkserver",
         "spawn": ("multiprocessing.popen_spawn_posix" if os.name == "posix"
                   else "multiprocessing.popen_spawn_win32")}


class Processes(PoolModel):
    family = "processes"
    OWNS = r"processes(-.*)?"
    PATTERN = (r"processes-(?P<processes>\d+)(?:-chunk-(?P<chunk>\d+))?"
               r"(?:-(?P<lifetime>reuse))?(?:-(?P<start_method>fork|forkserver|spawn))?"
               r"(?:-(?P<default>default))?")
    FORM = ("processes-N-chunk-C[-reuse][-fork|-forkserver|-spawn][-default], "
            "N >= 1 and C >= 1 (-default: N is ProcessPoolExecutor()'s size on "
            "the machine that ran it)")
    pool_kind = "process"
    stdlib_executor = "ProcessPoolExecutor"
    runs_in_subprocesses = True

    def __init__(self, processes, chunk=1, lifetime="fresh",
                 start_method=DEFAULT_START_METHOD, default=None):
        super().__init__(lifetime, default)
        self.nprocesses = positive("the number of processes", processes)
        self.chunk = positive("the chunk size", chunk)
        if start_method not in multiprocessing.get_all_start_methods():
            raise ModelError("start method %r is not available here" % start_method)
        self.start_method = start_method

    @property
    def name(self):
        name = "processes-%d-chunk-%d" % (self.nprocesses, self.chunk)
        if self.lifetime == "reuse":
            name += "-reuse"
        if self.start_method != DEFAULT_START_METHOD:
            name += "-" + self.start_method
        return name + self.default_suffix()

    @property
    def parallelism(self):
        return self.nprocesses

    @property
    def interpreters(self):
        return self.nprocesses

    def scaling(self):
        if self.lifetime != "fresh":
            return None
        series = "chunk %d" % self.chunk
        if self.start_method != DEFAULT_START_METHOD:
            series += ", " + self.start_method
        return ("processes", "process", series)

    def metadata(self):
        meta = super().metadata()
        meta.update({schema.PROCESSES: self.nprocesses,
                     schema.START_METHOD: self.start_method})
        return meta

    def open(self):
        """What the first pool of a program sets up once, and no later pool
        pays, is set up here, outside the timed batches, so that it is on
        no batch's clock (measured in b40a9c0: git show b40a9c0): the
        modules of its locks and of its start method, the forkserver's
        server and spawn's resource tracker (processes that outlive every
        pool of this worker). A reused pool starts here."""
        importlib.import_module("multiprocessing.synchronize")
        importlib.import_module(POPEN[self.start_method])
        if self.start_method == "forkserver":
            from multiprocessing import forkserver
            forkserver.ensure_running()
        elif self.start_method == "spawn" and os.name == "posix":
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()
        super().open()

    def new_pool(self):
        context = multiprocessing.get_context(self.start_method)
        # Each pool process ends with this worker, however it ends
        # (concbench.run.lifeline; on Linux a forked one only sets its
        # parent-death signal).
        return ProcessPoolExecutor(max_workers=self.nprocesses, mp_context=context,
                                   initializer=pool_initializer, initargs=(os.getpid(),))

    def map_each(self, pool, sync_fn, items):
        results = pool.map(sync_fn, items, chunksize=self.chunk)
        return list(arrived(results) if is_stamped(sync_fn) else results)

    def map_received(self, pool, function, items):
        # map's chunks are runs of consecutive items: chunk k's results
        # come together, the first of them once its task has ended.
        results = pool.map(function, items, chunksize=self.chunk)
        if self.chunk == 1:
            return receive_each(results)
        return receive(iter(lambda: list(islice(results, self.chunk)), []), self.chunk)

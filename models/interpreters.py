"""interpreters-N[-chunk-C]: a pool of N subinterpreters, C items per task.

Each worker thread runs items in an interpreter of its own, with its own GIL
(PEP 684): CPU-bound Python code runs in parallel inside one process, as
with processes but without a fork. Python 3.14 has the pool in the standard
library (concurrent.futures.InterpreterPoolExecutor); on 3.13 the
interpreters-pep-734 backport provides the same class. On 3.12 the backport
needs a low-level module of its own (interpreters-3-12) that crashed creating
a first interpreter (seen in e989036: git show e989036), so the model needs
3.13.

The callable, the items and the results cross between interpreters pickled,
as between processes. A function defined in ``__main__`` cannot be unpickled
in another interpreter, and the backport hung on one (seen in e989036), so
the model refuses one before starting a pool. Libraries that do not declare
support for several interpreters (Pillow 12, numpy, psutil) cannot be
imported in one with its own GIL: a workload that needs one says so
(``Workload.subinterpreters``) and is left out for this model.

Every wait on an interpreter is bounded by a watchdog: an interpreter that
does not answer within ``wait_limit_s`` ends the benchmark with one line,
rather than leaving the run waiting for it.
"""

import os
import pickle
import sys
import threading

from concbench import schema

from .base import ModelError, positive
from .pools import PoolModel

BACKPORT = "interpreters-pep-734"


def executor():
    """(InterpreterPoolExecutor, what it is), or (None, why there is none)."""
    if sys.version_info >= (3, 14):
        from concurrent.futures import InterpreterPoolExecutor
        return InterpreterPoolExecutor, "concurrent.futures (Python %d.%d)" % (
            sys.version_info[:2])
    if sys.version_info >= (3, 13):
        try:
            from interpreters_backport.concurrent.futures import (
                InterpreterPoolExecutor)
        except ImportError:
            return None, ("on Python 3.13 subinterpreter pools need the %s "
                          "backport (pip install %s)" % (BACKPORT, BACKPORT))
        from importlib import metadata
        try:
            version = metadata.version(BACKPORT)
        except metadata.PackageNotFoundError:
            version = "unknown version"
        return InterpreterPoolExecutor, "%s %s" % (BACKPORT, version)
    return None, ("subinterpreter pools need Python 3.13 or later (3.14's "
                  "concurrent.futures.InterpreterPoolExecutor, or the %s "
                  "backport on 3.13)" % BACKPORT)


def interpreter_gils():
    """The GIL setting ("own" or "shared") of every interpreter but the
    main one, as the interpreters themselves are configured."""
    import _interpreters
    found = set()
    for entry in _interpreters.list_all():
        interp = entry[0] if isinstance(entry, tuple) else entry
        if interp == 0:
            continue
        try:
            found.add(_interpreters.get_config(interp).gil)
        except Exception:       # gone between the two calls
            continue
    return found


def why_unpicklable(fn):
    """Why ``fn`` cannot be handed to another interpreter ("" if it can)."""
    target = getattr(fn, "func", fn)       # functools.partial
    if getattr(target, "__module__", None) == "__main__":
        return ("its item function %s is defined in __main__, which another "
                "interpreter cannot import" % getattr(target, "__qualname__", target))
    try:
        pickle.dumps(fn)
    except Exception as exc:
        return "its item function cannot be pickled (%s)" % exc
    return ""


class Watchdog:
    """Ends the worker process, with one line, if a batch outlives the
    limit: a hung interpreter cannot be interrupted, and its thread would
    also keep the process from exiting."""

    def __init__(self, limit, what):
        self.timer = threading.Timer(limit, self.expire, args=(limit, what))
        self.timer.daemon = True

    def expire(self, limit, what):
        print("ERROR: %s: an interpreter did not answer within %g s; the "
              "benchmark ends here" % (what, limit), file=sys.stderr, flush=True)
        os._exit(1)

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc_info):
        self.timer.cancel()


class Interpreters(PoolModel):
    family = "interpreters"
    OWNS = r"interpreters(-.*)?"
    PATTERN = (r"interpreters-(?P<interpreters>\d+)(?:-chunk-(?P<chunk>\d+))?"
               r"(?:-(?P<lifetime>reuse))?")
    FORM = "interpreters-N[-chunk-C][-reuse], N >= 1 and C >= 1"
    pool_kind = "interpreter"
    # No batch of the suite's presets comes near it; a hung one ends here.
    wait_limit_s = 600.0

    def __init__(self, interpreters, chunk=None, lifetime="fresh"):
        super().__init__(lifetime)
        self.ninterpreters = positive("the number of interpreters", interpreters)
        self.chunk = None if chunk is None else positive("the chunk size", chunk)
        self.gils = set()

    @property
    def name(self):
        return self.pool_name("interpreters", self.ninterpreters)

    @property
    def parallelism(self):
        return self.ninterpreters

    @property
    def interpreters(self):
        return self.ninterpreters

    def scaling(self):
        return self.chunk_series("interpreters", "interpreter")

    def supports(self, workload):
        cls, why = executor()
        if cls is None:
            return why
        if workload.subinterpreters:
            return workload.subinterpreters
        why = why_unpicklable(workload.sync_function())
        return why

    def metadata(self):
        meta = super().metadata()
        meta[schema.INTERPRETERS_IMPL] = executor()[1]
        return meta

    def run_labels(self):
        """What the pool's interpreters were configured with, as seen."""
        if not self.gils:
            return {}
        return {schema.INTERPRETER_GIL: "/".join(sorted(self.gils))}

    def new_pool(self):
        cls, why = executor()
        if cls is None:
            raise ModelError(why)
        # A new interpreter starts with the interpreter's initial sys.path,
        # not this process's: give it the same, so that the item function's
        # module (this checkout's or a plugin's) imports there too.
        # requests warns once per interpreter that charset_normalizer (built
        # with mypyc, single-interpreter only) cannot load; it needs none.
        setup = ("import sys, warnings; sys.path[:] = %r; warnings.filterwarnings("
                 "'ignore', 'Unable to find acceptable character detection')"
                 % (list(sys.path),))
        return cls(max_workers=self.ninterpreters, initializer=exec,
                   initargs=(setup, {}))

    def map(self, pool, sync_fn, items):
        why = why_unpicklable(sync_fn)
        if why:
            raise ModelError("%s cannot run this workload: %s" % (self.name, why))
        results = super().map(pool, sync_fn, items)
        self.gils.update(interpreter_gils())
        return results

    def close(self):
        with Watchdog(self.wait_limit_s, self.name):
            super().close()

    def run(self, sync_fn, async_fn, items, clock=None):
        with Watchdog(self.wait_limit_s, self.name):
            return super().run(sync_fn, async_fn, items, clock)

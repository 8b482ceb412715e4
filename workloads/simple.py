"""A workload in a few lines: one function, a way to make its items.

    import json

    from concbench.workloads.simple import workload

    def documents(rnd, count):          # rnd: random.Random seeded by --seed
        return [json.dumps({"id": i, "scores": [rnd.random() for _ in range(50)]})
                for i in range(count)]

    @workload("json-decode", items=documents, count=2000)
    def decode(document):
        return json.loads(document)

The decorator returns the function unchanged (process pools pickle it by
its name) and attaches a ``Workload`` subclass, ``decode.concbench_workload``,
which ``--workload-module`` and the ``concbench.workloads`` entry point
group both accept. A coroutine function gets a sync form that runs it to
completion; a plain function an async form that calls it in a coroutine.
Every batch is checked against the function's results run sequentially,
or against ``reference(items)`` when one is given.
"""

import asyncio
import functools
import inspect
import random

from .base import ITEMS, SEED, Workload


def workload(name, items, count=100, kind="cpu", reference=None, seed=1):
    """Make the decorated function a workload called ``name``: ``items(rnd,
    count)`` makes a batch's inputs (``--items`` overrides ``count``,
    ``--seed`` ``seed``); ``kind`` is "cpu" or "io"."""
    def register(function):
        cls = type("Workload_" + function.__name__, (SimpleWorkload,), {
            "__module__": function.__module__, "__doc__": function.__doc__})
        cls.name, cls.kind = name, kind
        cls.OPTIONS = (ITEMS.with_default(count), SEED.with_default(seed))
        cls.function, cls.maker = staticmethod(function), staticmethod(items)
        cls.given_reference = staticmethod(reference) if reference else None
        cls.async_form = ("native coroutine" if inspect.iscoroutinefunction(function)
                          else "sync item called inside a coroutine")
        function.concbench_workload = cls
        return function
    return register


class SimpleWorkload(Workload):
    function = maker = given_reference = None

    def make_items(self):
        rnd = random.Random(self.params[SEED.param])
        return list(type(self).maker(rnd, self.params[ITEMS.param]))

    def sync_function(self):
        function = type(self).function
        if inspect.iscoroutinefunction(function):
            return functools.partial(run_to_completion, function)
        return function

    def async_function(self):
        function = type(self).function
        if inspect.iscoroutinefunction(function):
            return function
        return super().async_function()

    def reference(self, items):
        if type(self).given_reference is not None:
            return list(type(self).given_reference(items))
        return super().reference(items)


def run_to_completion(function, item):
    """The sync form of a coroutine function: one event loop per item."""
    return asyncio.run(function(item))

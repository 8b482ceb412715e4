"""Workload registry: adding a workload is one file plus one line here.

Each entry names a ``Workload`` subclass as "module:Class", the module
relative to this package. The order is the order of the matrix (pyperf
selects a worker's benchmark by its position, so it must not change between
runs).
"""

import importlib

REGISTRY = {
    "encode": ".encode:Encode",
    "rotate": ".rotate:Rotate",
    "sleep": ".sleep:Sleep",
    "http": ".http:Http",
    "db": ".db:Db",
}


def get(name):
    """The Workload subclass registered as ``name`` (KeyError if none)."""
    module, _, cls = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module, __name__), cls)


def classes():
    """Every registered workload class, in registry order."""
    return [get(name) for name in REGISTRY]

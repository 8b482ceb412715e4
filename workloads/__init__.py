"""Workload registry: adding a workload is one file plus one line here
(or, outside this package, an entry point: concbench.plugins).

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


def plugins():
    """{name: Plugin} of the workloads other packages and --workload-module
    add, after the built-in ones (concbench.plugins)."""
    from concbench import plugins as found
    return found.added(found.WORKLOAD_GROUP, REGISTRY)


def names():
    """Every workload's name: the built-in ones in registry order, then the
    plugins' by name."""
    return list(REGISTRY) + list(plugins())


def get(name):
    """The Workload subclass registered as ``name`` (KeyError if none;
    PluginError if it is a plugin that cannot be used)."""
    if name not in REGISTRY:
        return plugins()[name].load()
    module, _, cls = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module, __name__), cls)


def classes():
    """Every usable workload class, in the order of names()."""
    return [get(name) for name in names() if name in REGISTRY
            or not plugins()[name].broken()]

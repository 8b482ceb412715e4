"""Model registry: adding a concurrency model is one file plus one line here
(or, outside this package, an entry point: concbench.plugins).

Each entry names a ``Model`` subclass (one family of models, parsed from
names such as threads-8) as "module:Class", the module relative to this
package. A name is tried against the families in this order.
"""

import importlib

from .base import ModelError

FAMILIES = [
    ".sequential:Sequential",
    ".threads:Threads",
    ".processes:Processes",
    ".tasks:Tasks",
    ".serial:Serial",
    ".hybrid:Hybrid",
    ".eager:Eager",
    ".interpreters:Interpreters",
    ".dask:Dask",
    ".control:Control",
]


def builtin():
    found = []
    for entry in FAMILIES:
        module, _, cls = entry.partition(":")
        found.append(getattr(importlib.import_module(module, __name__), cls))
    return found


def plugins():
    """{family: Plugin} of the model families other packages add."""
    from concbench import plugins as found
    return found.added(found.MODEL_GROUP, [family.family for family in builtin()])


def families():
    """Every usable model family (class): the registry's, then the
    plugins' by name."""
    return builtin() + [plugin.load() for plugin in plugins().values()
                        if not plugin.broken()]


def forms():
    """What model names look like, for error messages and --help."""
    return "; ".join(family.FORM for family in families())


def parse(name):
    """Return the model a name describes; raise ModelError if none does."""
    for family in families():
        model = family.parse(name)
        if model is not None:
            return model
    broken = ["; %s" % plugin.broken() for plugin in plugins().values()
              if plugin.broken()]
    raise ModelError("unknown model %r; models are: %s%s" % (name, forms(), "".join(broken)))


def reference_name():
    """The name of the model every other model of a workload is compared with."""
    family = next(family for family in families() if family.is_reference)
    return family().name


__all__ = ["FAMILIES", "ModelError", "families", "forms", "parse", "reference_name"]

"""Model registry: adding a concurrency model is one file plus one line here.

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
]


def families():
    """Every registered model family (class), in registry order."""
    found = []
    for entry in FAMILIES:
        module, _, cls = entry.partition(":")
        found.append(getattr(importlib.import_module(module, __name__), cls))
    return found


def forms():
    """What model names look like, for error messages and --help."""
    return "; ".join(family.FORM for family in families())


def parse(name):
    """Return the model a name describes; raise ModelError if none does."""
    for family in families():
        model = family.parse(name)
        if model is not None:
            return model
    raise ModelError("unknown model %r; models are: %s" % (name, forms()))


def reference_name():
    """The name of the model every other model of a workload is compared with."""
    family = next(family for family in families() if family.is_reference)
    return family().name


__all__ = ["FAMILIES", "ModelError", "families", "forms", "parse", "reference_name"]

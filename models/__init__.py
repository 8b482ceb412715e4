"""Model registry: adding a concurrency model is one file plus one line here."""

from models.base import ModelError
from models.hybrid import Hybrid
from models.processes import Processes
from models.sequential import Sequential
from models.serial import Serial
from models.tasks import Tasks
from models.threads import Threads

FAMILIES = [Sequential, Threads, Processes, Tasks, Serial, Hybrid]

FORMS = "; ".join(family.FORM for family in FAMILIES)


def parse(name):
    """Return the model a name describes; raise ModelError if none does."""
    for family in FAMILIES:
        model = family.parse(name)
        if model is not None:
            return model
    raise ModelError("unknown model %r; models are: %s" % (name, FORMS))


__all__ = ["FAMILIES", "FORMS", "ModelError", "parse"]

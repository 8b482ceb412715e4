"""sequential: one item after another in the calling thread; the reference."""

from .base import Model


class Sequential(Model):
    family = "sequential"
    OWNS = r"sequential.*"
    PATTERN = r"sequential"
    FORM = "sequential"
    timed = "running every item in turn"
    is_reference = True
    latency_from = "item"

    @property
    def name(self):
        return "sequential"

    def run(self, sync_fn, async_fn, items, clock=None):
        return [sync_fn(item) for item in items]

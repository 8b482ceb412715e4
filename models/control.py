"""control: the reference model again, under a name of its own (an A/A control).

Every run measures each workload's reference against itself: this model runs
the reference's own loop in worker processes of its own, in the same rounds
and paired the same way as any model, so its speedup is 1 by construction
and any verdict but "same" or "undecided" is an error of the intervals on
this machine at this moment (the report then marks the run untrusted).
bench.py adds it beside the reference unless --no-control is given; with
--reference MODEL it runs that model (a pool, threads) against itself.
"""

from concbench import schema

from .base import Model


class Control(Model):
    family = "control"
    OWNS = r"control.*"
    PATTERN = r"control"
    FORM = "control"

    def __init__(self, reference=None):
        """``reference``: the model to run again (--reference; by default
        the registry's reference, sequential)."""
        from . import families
        self.reference = reference or next(
            family for family in families() if family.is_reference)()

    @property
    def name(self):
        return "control"

    @property
    def timed(self):
        return "the reference model's own batch (%s)" % self.reference.timed

    @property
    def item_side(self):
        return self.reference.item_side

    @property
    def latency_from(self):
        return self.reference.latency_from

    @property
    def runs_in_subprocesses(self):
        return self.reference.runs_in_subprocesses

    @property
    def concurrency(self):
        return self.reference.concurrency

    @property
    def parallelism(self):
        return self.reference.parallelism

    @property
    def interpreters(self):
        return self.reference.interpreters

    def in_flight(self, items):
        return self.reference.in_flight(items)

    def supports(self, workload):
        return self.reference.supports(workload)

    def metadata(self):
        meta = super().metadata()
        meta[schema.CONTROL_OF] = self.reference.name
        return meta

    def libraries(self):
        return self.reference.libraries()

    def run_labels(self):
        return self.reference.run_labels()

    def open(self):
        self.reference.open()

    def close(self):
        self.reference.close()

    def prime(self, sync_fn, async_fn, item):
        self.reference.prime(sync_fn, async_fn, item)

    def run(self, sync_fn, async_fn, items, clock=None):
        return self.reference.run(sync_fn, async_fn, items, clock)

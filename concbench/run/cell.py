"""One cell of the matrix (``Cell``): a workload run by a model, what its
benchmark's metadata says of it, and its items, reference results and model
opened once per worker, outside the timed region."""

import atexit

from concbench import item_stamps, models, schema
from concbench.plugins import source_metadata
from concbench.run import inputs
from concbench.run.interventions import used
from concbench.run.partner import Partner, supported as partner_supported
from concbench.workloads.base import RATE


class Cell:
    """One cell of the matrix: a workload run by a model."""

    def __init__(self, workload, model, pairing="round", overhead=False, record=True,
                 reference=None, beside=None):
        self.workload = workload
        self.model = model
        # A race's comparison side by side: the leader's model name, whose
        # batches run beside this model's in place of the reference's.
        self.beside = beside
        self.name = "%s/%s" % (workload.label, model.name)
        if beside:
            self.name = schema.beside_name(self.name, beside)
        self.pairing = pairing
        # Whether its items' latencies are recorded (concbench.item_stamps).
        self.record = record
        # The model every other is compared with (--reference; sequential).
        self.reference = reference or models.reference_name()
        # The reference's cell, whose batches run beside this one's in its
        # worker (pairing "worker"; concbench.run.schedule); with ``overhead``,
        # the same model unrecorded instead: what recording costs.
        partner = models.parse(model.name if overhead else beside or self.reference)
        self.partner = (Cell(workload, partner, "none", record=record and not overhead,
                              reference=self.reference)
                        if pairing == "worker" else None)
        self.overhead = overhead
        self._forms = None
        self.round = None   # the round this worker runs (set where it runs)
        # Whether the model runs in the copy forked for the pairing and the
        # reference in this process (concbench.run.partner; set where it runs).
        self.model_forked = False
        # Set where it runs: the worker's warm-ups (pyperf's -w), the
        # batches run so far, and the reference's batches beside the
        # warm-ups (recorded with the first value: WARMUP_REFERENCE_S).
        self.warmups = 0
        self.inputs = None      # the run's folder of shared inputs (concbench.run.inputs)
        self.batches_done = 0
        self.warmup_references = []
        self.partner_process = None
        # The CPU the worker keeps to (concbench.run.partner.pin_worker),
        # None where it is left to the scheduler.
        self.pinned = None
        self.warned = False
        self._prepared = None

    def metadata(self):
        """Everything that describes this benchmark (some of it generated or
        read from a server: call it only where the benchmark runs)."""
        meta = self.workload.metadata()
        meta.update(self.model.metadata())
        note = self.workload.timed_note(self.model)
        if note:
            meta[schema.TIMED] = "%s; %s" % (meta[schema.TIMED], note)
        meta.update(library_versions(self.workload.libraries()
                                     + self.model.libraries()))
        meta.update(source_metadata(type(self.workload), schema.WORKLOAD))
        meta.update(source_metadata(type(self.model), schema.MODEL))
        meta[schema.BATCH_CHECK] = ("every item's result equals the sequential "
                               "reference, computed outside the timed region")
        meta[schema.REFERENCE_MODEL] = self.reference
        meta[schema.PAIRING] = self.pairing
        if self.overhead:
            meta[schema.PAIRED_WITH] = "itself unrecorded"
        if self.beside:
            meta[schema.BESIDE] = self.beside
        meta[schema.WORKLOAD_PARAMS] = self.workload.reported(meta)
        return meta

    def item_forms(self, prepared):
        """(sync, async) item forms as the model calls them: stamped with
        their start and end (concbench.item_stamps), and waiting for their
        schedule in an open-loop run; as they are when not recorded."""
        _, _, sync_fn, async_fn = prepared
        if not self.record:
            return sync_fn, async_fn
        if self._forms is None:
            if self.workload.params.get(RATE.param):
                self._forms = (item_stamps.Scheduled(sync_fn), item_stamps.schedule_async(async_fn))
            else:
                self._forms = (item_stamps.Stamped(sync_fn), item_stamps.stamp_async(async_fn))
        return self._forms

    def partner_pid(self):
        """The pid of the process running the reference's batches beside
        this benchmark's, if it has one."""
        return self.partner_process.pid if self.partner_process else None

    def in_flight(self):
        return self.model.in_flight(self.workload.count())

    def prepare(self):
        """Inputs, reference and reused pools: once per worker, not timed."""
        if self._prepared is None:
            items, reference = inputs.items_and_reference(self.workload, self.inputs)
            sync_fn = self.workload.sync_function()
            async_fn = self.workload.async_function()
            models_here = [self.model]
            if self.partner is not None:
                # The same model unrecorded (--latency-overhead) sees what
                # the model leaves behind as the recorded one does: it runs
                # in this process, alternating with it, the one difference
                # being the recording.
                if partner_supported() and not self.overhead and used("partner"):
                    # Forked before the model opens or runs anything; the
                    # model runs on the side this run of the row gives it.
                    self.partner_process = Partner(
                        self, (items, reference, sync_fn, async_fn),
                        forked=self.model_forked)
                    atexit.register(self.partner_process.close)
                else:
                    models_here.append(self.partner.model)
            from concbench.run.run_figures import BatchProbe, RunFigures
            if RunFigures.current is not None:
                BatchProbe.start_sampler(self.partner_pid())
            for model in models_here:
                model.open()
                atexit.register(model.close)
                self.workload.open(model)
                if items and used("prime"):
                    model.prime(sync_fn, async_fn, items[0])
            atexit.register(self.workload.close)
            self._prepared = (items, reference, sync_fn, async_fn)
        return self._prepared


def library_versions(distributions):
    import importlib.metadata

    versions = {}
    for dist in distributions:
        try:
            versions[schema.version_key(dist)] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions

"""The contract every workload fulfils, so any model can run any workload.

A workload owns everything about its work: its parameters as command-line
options (``Option``), their defaults and validation, its sizes and model lists
in each preset it belongs to, its inputs, its check, and the metadata that
describes it. bench.py and report.py read these and name no workload.
"""

from concbench import schema

# Worker counts sized to the machine: a preset's model list names a family
# over the ladder, and the standard library's defaults.
from concbench.ladder import (ALL, DEFAULT, POOL_MAP, PROCESS_POOL_DEFAULT, QUICK,
                              THREAD_POOL_DEFAULT, USABLE, ladder)

from .options import (ITEMS, JITTER_MS, LATENCY_MS, PROCESSES_FULL, RATE, SEED, SWEEP,
                      SWEEP_RATES, THREADS_FULL, Option, parse_rate, preset)

# What a workload imports from here (docs/plugins.md): the contract, and the
# options and presets' helpers of .options.
__all__ = ["CheckError", "Workload", "ITEMS", "JITTER_MS", "LATENCY_MS", "PROCESSES_FULL",
           "RATE", "SEED", "SWEEP", "SWEEP_RATES", "THREADS_FULL", "Option", "parse_rate",
           "preset", "ladder", "ALL", "DEFAULT", "QUICK", "USABLE", "POOL_MAP",
           "THREAD_POOL_DEFAULT", "PROCESS_POOL_DEFAULT"]


class CheckError(Exception):
    """A batch's result differs from the sequential reference."""


class Unavailable(Exception):
    """provide() cannot start what the workload needs here (one line why):
    the run leaves the workload out and goes on."""


class Workload:
    """One kind of work: seeded inputs, a sync and an async item, a batch check.

    Subclasses set ``name``, ``kind`` ("cpu" or "io"), ``OPTIONS`` (its
    parameters with their defaults, every one recorded in metadata),
    ``PRESETS`` (preset name -> ``preset(models, **sizes)``) and
    ``REPORTED`` (the metadata keys the report shows beside its name).
    """

    name = ""
    kind = ""
    OPTIONS = ()
    PRESETS = {}
    REPORTED = (schema.ITEMS_PER_BATCH, "seed")
    # How the async form relates to the sync one; recorded in metadata.
    async_form = "native coroutine"
    # Connections each item in progress keeps open (for the descriptor check).
    sockets_per_item = 0
    # The most workers a pool of the ladder may have (concbench.ladder): db's
    # connections under a stock server's max_connections; None: no cap.
    most_workers = None
    # Parameters the workload can supply itself in the master when the user
    # gives none (provide()): the local load server's URL.
    PROVIDED = ()
    # Why the items cannot run in a subinterpreter with its own GIL ("" if
    # they can): a library they need does not support several interpreters.
    subinterpreters = ""
    # Whether the items and reference results may be made once per run and
    # loaded by every worker (pickled; concbench.run.inputs): set it only where
    # make_items() and reference() have no side effect a worker relies on.
    shared_inputs = False

    def __init__(self, **params):
        defaults = self.defaults()
        unknown = set(params) - set(defaults)
        if unknown:
            raise ValueError("%s: unknown parameter(s) %s"
                             % (self.name, ", ".join(sorted(unknown))))
        options = {option.param: option for option in self.OPTIONS}
        self.params = defaults
        for param, value in params.items():
            if value != defaults[param]:
                value = options[param].check(value)
            self.params[param] = value

    @classmethod
    def defaults(cls):
        return {option.param: option.default for option in cls.OPTIONS}

    @classmethod
    def missing(cls, params):
        """The flags of required options that ``params`` leaves empty."""
        return [option.flag for option in cls.OPTIONS
                if option.required and not params.get(option.param)]

    @property
    def label(self):
        """The workload's name in benchmark names: with its arrival rate in
        an open-loop run (``http@200/s``)."""
        rate = self.params.get(RATE.param)
        return "%s@%g/s" % (self.name, rate) if rate else self.name

    # -- inputs -----------------------------------------------------------
    def count(self):
        """Items per batch: the --items parameter, or for a workload without
        one, how many make_items() makes."""
        if ITEMS.param in self.params:
            return self.params[ITEMS.param]
        if getattr(self, "_count", None) is None:
            self._count = len(self.make_items())
        return self._count

    def make_items(self):
        """Return the batch's items, generated from the seed (not timed)."""
        raise NotImplementedError

    # -- the work ---------------------------------------------------------
    def sync_function(self):
        """Return a callable item -> result that process pools can pickle.

        That means a module-level function, or functools.partial of one.
        """
        raise NotImplementedError

    def async_function(self):
        """Return a coroutine function item -> result.

        The default, for CPU work, calls the sync item inside a coroutine,
        as the seeds did.
        """
        sync = self.sync_function()

        async def run_in_coroutine(item):
            return sync(item)
        return run_in_coroutine

    # -- latencies of IO workloads (params latency_ms and jitter_ms) --------
    def check_jitter(self):
        """Latencies are drawn in latency +- jitter and are never negative."""
        p = self.params
        if not 0 <= p["jitter_ms"] <= p["latency_ms"]:
            raise ValueError("%s: jitter (%g ms) must be between 0 and the "
                             "latency (%g ms)" % (self.name, p["jitter_ms"],
                                                  p["latency_ms"]))

    def draw_latency_ms(self, rnd):
        """One item's latency, uniform in latency +- jitter."""
        p = self.params
        return rnd.uniform(p["latency_ms"] - p["jitter_ms"],
                           p["latency_ms"] + p["jitter_ms"])

    # -- verification -----------------------------------------------------
    def reference(self, items):
        """Per-item results the batch must reproduce (not timed).

        The default runs the sync item sequentially: the sequential reference.
        """
        sync = self.sync_function()
        return [sync(item) for item in items]

    def check(self, results, reference):
        """Raise CheckError unless ``results`` equals ``reference`` item by item.

        Returns a summary dict (items, failures, ...) for the run's figures.
        """
        results = self.check_count(results, reference)
        differ = [i for i, (got, want) in enumerate(zip(results, reference))
                  if got != want]
        if differ:
            raise CheckError("%d of %d item results differ from the sequential "
                             "reference (first: item %d, got %r, expected %r)"
                             % (len(differ), len(reference), differ[0],
                                results[differ[0]], reference[differ[0]]))
        return {schema.ITEMS: len(results), schema.FAILURES: 0}

    @staticmethod
    def check_count(results, reference):
        """The results as a list, or CheckError if items were lost or added."""
        if results is None:
            raise CheckError("the model returned no results")
        results = list(results)
        if len(results) != len(reference):
            raise CheckError("%d results for %d items: %d item(s) lost or added"
                             % (len(results), len(reference),
                                abs(len(reference) - len(results))))
        return results

    # -- resources that outlive a batch (not timed) -------------------------
    def needs_providing(self):
        """Whether provide() has something to do (master only)."""
        return any(not self.params[param] for param in self.PROVIDED)

    def provide(self):
        """Master only, once, for the PROVIDED parameters the user left empty:
        start what stands in for them and return {param: value}, which the
        workers receive as options. Register its stop with
        ``concbench.run.cleanup.on_exit`` before starting it. Raise
        Unavailable where it cannot start here."""
        return {}

    def preflight(self, in_flight):
        """Called once in the master before any benchmark, with the most items
        each benchmark keeps in progress ({name: count}); raise ValueError
        with a one-line message if the run cannot succeed."""

    def open(self, model):
        """Called once per worker before its batches, for ``model``."""

    def close(self):
        """Release what open() created."""

    # -- figures around each batch (not timed) -----------------------------
    def before_batch(self):
        """Called before each timed batch, outside the timed region."""
        return None

    def after_batch(self, before, elapsed):
        """Figures about the batch just run (a server's CPU, ...), as a dict."""
        return {}

    # -- description ------------------------------------------------------
    def metadata(self):
        meta = {schema.WORKLOAD: self.label, schema.WORKLOAD_KIND: self.kind,
                schema.ASYNC_FORM: self.async_form}
        for key, value in self.params.items():
            if key == RATE.param and not value:
                continue    # closed loop
            # Per-run figures use "items" for the items actually run.
            meta[schema.ITEMS_PER_BATCH if key == ITEMS.param else key] = value
        meta[schema.ITEMS_PER_BATCH] = self.count()
        latencies = self.latencies(self.make_items()) if self.kind == "io" else None
        if latencies:
            # The report's ideal time needs the drawn latencies, not their mean.
            meta[schema.LATENCY_SUM_S] = sum(latencies)
            meta[schema.LATENCY_MAX_S] = max(latencies)
        return meta

    @classmethod
    def reported(cls, meta):
        """The one-line description of the parameters the report shows."""
        return ", ".join("%s=%s" % (key, meta[key]) for key in cls.REPORTED
                         if key in meta)

    def latencies(self, items):
        """IO workloads: each item's latency in seconds, as drawn."""
        return None

    def timed_note(self, model):
        """What this workload adds to ``model``'s timed region, if anything."""
        return ""

    def libraries(self):
        """Distribution names whose versions belong in the metadata."""
        return []

"""The contract every workload fulfils, so any model can run any workload.

A workload owns everything about its work: its parameters as command-line
options (``Option``), their defaults and validation, its sizes and model lists
in each preset it belongs to, its inputs, its check, and the metadata that
describes it. bench.py and report.py read these and name no workload.
"""

import argparse

from concbench import schema


class CheckError(Exception):
    """A batch's result differs from the sequential reference."""


class Option:
    """A workload parameter that is also a bench.py option.

    A number within [low, high] (``kind`` int or float), one of ``choices``,
    or whatever ``parse`` accepts (it raises ValueError with a message). The
    same option may serve several workloads, each with its own default
    (``with_default``); ``required`` ones have no usable default, and a
    workload that lacks them is left out of a preset.
    """

    def __init__(self, param, flag, help, kind=None, low=None, high=None,
                 choices=None, parse=None, metavar=None, required=False,
                 default=None):
        self.param, self.flag, self.help = param, flag, help
        self.kind, self.low, self.high = kind, low, high
        self.choices, self.parse = choices, parse
        self.metavar, self.required, self.default = metavar, required, default

    def with_default(self, default):
        copy = Option.__new__(Option)
        copy.__dict__.update(self.__dict__, default=default)
        return copy

    def spec(self):
        """What must agree between workloads that share the option."""
        return (self.flag, self.help, self.kind, self.low, self.high,
                self.choices, self.parse, self.metavar, self.required)

    def convert(self, text):
        """argparse's ``type``: the value, or ArgumentTypeError in one line."""
        try:
            if self.parse is None and self.choices is None:
                try:
                    value = self.kind(text)
                except ValueError:
                    raise ValueError("%s: %r is not a number"
                                     % (self.flag, text)) from None
                return self.check(value, text)
            return self.check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    def check(self, value, shown=None):
        """``value`` if valid, else ValueError in one line: the same rules
        whether it comes from the command line or from a preset."""
        if self.parse is not None:
            return self.parse(value)
        if self.choices is not None:
            if value not in self.choices:
                raise ValueError("%s: %r is not one of %s"
                                 % (self.flag, value, ", ".join(self.choices)))
            return value
        if not self.low <= value <= self.high:
            raise ValueError("%s: %s is out of range [%s, %s]"
                             % (self.flag, value if shown is None else shown,
                                self.low, self.high))
        return value


# Options that several workloads share.
ITEMS = Option("items", "--items", "items per batch", int, 1, 10_000_000)
SEED = Option("seed", "--seed", "seed of the generated inputs", int, 0, 2**32 - 1,
              default=1)
LATENCY_MS = Option("latency_ms", "--latency-ms", "mean latency of an IO item, in ms",
                    float, 0.0, 60_000.0)
JITTER_MS = Option("jitter_ms", "--jitter-ms",
                   "latencies are drawn uniformly in latency +- jitter, in ms",
                   float, 0.0, 60_000.0)

# Open loop (IO workloads): --rate N/s, or a sweep over these rates.
SWEEP_RATES = (25.0, 100.0, 400.0, 1600.0, 6400.0)
SWEEP = "sweep"


def parse_rate(text):
    """--rate: items per second ("200" or "200/s"), above 0, or "sweep"."""
    text = str(text).strip()
    if text == SWEEP:
        return SWEEP
    number = text[:-2] if text.endswith("/s") else text
    try:
        value = float(number)
    except ValueError:
        raise ValueError("--rate: %r is not a rate (N or N/s items per second, or "
                         "sweep)" % text) from None
    if not 0 < value < float("inf"):
        raise ValueError("--rate: %s is not a rate above 0 items per second" % text)
    return value


RATE = Option("rate", "--rate", "IO workloads: open loop, items arriving on a fixed "
              "schedule at N per second whatever the model is doing, latency "
              "counted from each one's arrival; 'sweep': each IO workload at %s/s"
              % ", ".join("%g" % r for r in SWEEP_RATES),
              parse=parse_rate, metavar="N/s|sweep", default=0.0)


# Worker counts of the full preset's scaling series.
THREADS_FULL = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
PROCESSES_FULL = [1, 2, 4, 8, 16, 32]


def preset(models, **params):
    """A workload's entry in a preset: the models to run and the sizes."""
    return {"models": list(models), "params": params}


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
    # Parameters the workload can supply itself in the master when the user
    # gives none (provide()): the local load server's URL.
    PROVIDED = ()
    # Why the items cannot run in a subinterpreter with its own GIL ("" if
    # they can): a library they need does not support several interpreters.
    subinterpreters = ""
    # Whether the items and reference results may be made once per run and
    # loaded by every worker (pickled; concbench.inputs): set it only where
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
        ``concbench.cleanup.on_exit`` before starting it."""
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


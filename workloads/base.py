"""The contract every workload fulfils, so any model can run any workload."""

class CheckError(Exception):
    """A batch's result differs from the sequential reference."""


class Workload:
    """One kind of work: seeded inputs, a sync and an async item, a batch check.

    Subclasses set ``name``, ``kind`` ("cpu" or "io") and ``PARAMS``
    (parameter name -> default, every one recorded in metadata).
    """

    name = ""
    kind = ""
    PARAMS = {}
    # How the async form relates to the sync one; recorded in metadata.
    async_form = "native coroutine"
    # For workloads with a server: the share of a batch's wall time the
    # server may spend on CPU before the result is flagged as server-bound.
    SERVER_BUSY_LIMIT = 0.5

    def __init__(self, **params):
        unknown = set(params) - set(self.PARAMS)
        if unknown:
            raise ValueError("%s: unknown parameter(s) %s"
                             % (self.name, ", ".join(sorted(unknown))))
        self.params = dict(self.PARAMS)
        self.params.update(params)

    # -- inputs -----------------------------------------------------------
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
        return {"items": len(results), "failures": 0}

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
        meta = {"workload": self.name, "workload_kind": self.kind,
                "async_form": self.async_form}
        for key, value in self.params.items():
            # Per-run figures use "items" for the items actually run.
            meta["items_per_batch" if key == "items" else key] = value
        latencies = self.latencies(self.make_items()) if self.kind == "io" else None
        if latencies:
            # The report's ideal time needs the drawn latencies, not their mean.
            meta["latency_sum_s"] = sum(latencies)
            meta["latency_max_s"] = max(latencies)
        return meta

    def latencies(self, items):
        """IO workloads: each item's latency in seconds, as drawn."""
        return None

    def timed_note(self, model):
        """What this workload adds to ``model``'s timed region, if anything."""
        return ""

    def libraries(self):
        """Distribution names whose versions belong in the metadata."""
        return []


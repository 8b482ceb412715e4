"""dask-N-chunk-C: the items as tasks of C items each on a Dask distributed
cluster of N worker processes of one thread each, its results gathered in
item order; dask-cluster-chunk-C: the same on the user's own cluster
(``--dask-scheduler ADDRESS``), its workers as they are.

A local cluster is started by the pyperf worker that runs the row, outside
the timed batches, and kept for its batches, as a reused pool is: its
processes are that worker's children, so their memory (PSS) and CPU count in
the model's tree, and each follows the worker (``dask_setup``, the
cluster's worker preload) however the worker ends. What a task costs on it
(the scheduler's round trips, pickling) is this model's cost, as a process
pool's pickling is a process pool's.

A user's cluster is the user's: the run starts and stops nothing there. Its
workers' memory and CPU are not in the local tree; the scheduler's own
metrics of them are recorded beside it, and are missing where it gives none.

dask and distributed are an extra (``pip install '.[dask]'``); without them
a dask row is left out with one line saying how to add them.
"""

import importlib.util
import os

from concbench import schema
from concbench.item_stamps import ReceivedResults, Stamped, arrived, is_stamped
from concbench.item_stamps import clock as now

from .base import BatchLost, Model, ModelError, positive
from .chunks import chunked, map_chunk

# The line a run prints where dask rows cannot run for want of the extra.
INSTALL = "dask is not installed: pip install 'concurrency-bench[dask]' (or '.[dask]' in a clone)"
# How long connecting to a user's scheduler may take.
CONNECT_TIMEOUT_S = 10
SCHEMES = ("tcp://", "tls://")


def missing():
    """Why no dask row can run in this environment ("" if one can)."""
    if any(importlib.util.find_spec(name) is None for name in ("dask", "distributed")):
        return INSTALL
    return ""


def check_address(address):
    """``address`` if it names a scheduler this model can reach (tcp:// or
    tls://, a host and a port); ModelError in one line otherwise."""
    text = (address or "").strip()
    if not text.startswith(SCHEMES):
        raise ModelError("--dask-scheduler %r: expected tcp://HOST:PORT or tls://HOST:PORT"
                         % address)
    host, _, port = text.split("://", 1)[1].rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ModelError("--dask-scheduler %r: expected tcp://HOST:PORT or tls://HOST:PORT"
                         % address)
    return text


def gil_turned_on():
    """On a free-threaded build, why dask cannot run as it is ("" where it
    can): importing it there, in a Python of its own, turned the GIL on."""
    import subprocess
    import sys
    import sysconfig

    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        return ""
    code = "import sys, dask, distributed; print(int(sys._is_gil_enabled()))"
    try:
        found = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return "dask could not be imported here (%s)" % exc
    if found.returncode != 0 or found.stdout.strip() not in ("0", "1"):
        return "dask could not be imported here (%s)" % (
            found.stderr.strip().splitlines() or ["exit %d" % found.returncode])[-1]
    if found.stdout.strip() == "1":
        return "importing dask and distributed turns the GIL back on in this build"
    return ""


# The packages whose versions must match between this Python and a cluster's
# (distributed's own list of what a task's pickling and protocol rest on).
MATCHED = ("python", "dask", "distributed", "cloudpickle", "msgpack", "toolz", "tornado")


def cluster_mismatch(address):
    """(why the rows cannot run on the cluster at ``address``, "" if they
    can: no worker, or versions of ``MATCHED`` other than this Python's;
    its (workers, threads)). ModelError in one line when it does not
    answer within CONNECT_TIMEOUT_S."""
    from distributed import Client

    try:
        client = Client(check_address(address), timeout=CONNECT_TIMEOUT_S,
                        set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ModelError("--dask-scheduler %s: no scheduler answered within %d s (%s)"
                         % (address, CONNECT_TIMEOUT_S, str(exc).splitlines()[0]
                            if str(exc) else type(exc).__name__)) from None
    try:
        versions = client.get_versions()
        workers = client.scheduler_info(n_workers=-1)["workers"]
    finally:
        client.close()
    shape = (len(workers), sum(w.get("nthreads", 1) for w in workers.values()))
    if not versions.get("workers"):
        return "the cluster at %s has no worker" % address, shape
    here = versions["client"]["packages"]
    differ = []
    for where, found in [("scheduler", versions["scheduler"])] + sorted(
            versions["workers"].items()):
        for name in MATCHED:
            theirs = found.get("packages", {}).get(name)
            if theirs != here.get(name):
                differ.append("%s %s here, %s on %s" % (name, here.get(name), theirs, where))
    if differ:
        return ("the cluster's versions differ from this Python's: %s"
                % "; ".join(differ[:3]), shape)
    return "", shape


def import_error(exc):
    """The ImportError behind ``exc`` (itself, or the cause distributed
    wrapped it in: "Error during deserialization of the task graph"), or
    None."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ImportError):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def dask_setup(worker):
    """The local cluster's worker preload: this worker process ends when the
    process that started the cluster ends, however it ends (its parent,
    which started it with multiprocessing's spawn)."""
    from concbench.run.lifeline import follow_process

    follow_process(os.getppid())


class Dask(Model):
    family = "dask"
    OWNS = r"dask(-.*)?"
    PATTERN = r"dask-(?:(?P<workers>\d+)|(?P<cluster>cluster))-chunk-(?P<chunk>\d+)"
    FORM = ("dask-N-chunk-C (a local Dask cluster of N worker processes of one thread), "
            "dask-cluster-chunk-C (the cluster of --dask-scheduler), C >= 1")
    item_side = "sync"
    runs_in_subprocesses = True
    # Set from --dask-scheduler (``configure``).
    address = None

    @property
    def outside(self):
        """A user's cluster is outside the run: its loss ends its row only."""
        return self.remote

    def __init__(self, chunk, workers=None, cluster=None):
        self.chunk = positive("the chunk size", chunk)
        self.nworkers = None if cluster else positive("the number of workers", workers)
        self._client = self._cluster = None
        # The user's cluster as found on connecting: (workers, threads).
        self._found = None
        # The modules whose code was looked at for sending (``send_code``).
        self._sent = set()

    @property
    def name(self):
        if self.nworkers is None:
            return "dask-cluster-chunk-%d" % self.chunk
        return "dask-%d-chunk-%d" % (self.nworkers, self.chunk)

    @property
    def remote(self):
        return self.nworkers is None

    @property
    def timed(self):
        return ("submitting every chunk of items as a task to the %s cluster, "
                "gathering the results in item order"
                % ("user's" if self.remote else "local"))

    def configure(self, args):
        """Take the scheduler's address from the run's options."""
        self.address = getattr(args, "dask_address", None)
        shape = getattr(args, "dask_cluster", None)
        if shape:
            workers, threads = (int(part) for part in shape.split(","))
            self._found = (workers, threads)

    @classmethod
    def check_run(cls, args, models):
        """Once, in the master: on a free-threaded build, whether importing
        dask turns the GIL back on (then every dask row is left out); where
        a row runs on the user's cluster, that the cluster answers within
        CONNECT_TIMEOUT_S (ModelError otherwise) and runs this Python's
        versions (its rows are left out otherwise)."""
        if missing():
            return {}
        why = gil_turned_on()
        if why:
            return {"dask-*": why}
        address = getattr(args, "dask_address", None)
        if address and any(model.remote for model in models):
            why, shape = cluster_mismatch(address)
            if why:
                return {"dask-cluster-*": why}
            # Its workers and threads, for every worker's metadata: found
            # here, so that no pyperf worker connects before it forks.
            args.dask_cluster = "%d,%d" % shape
        return {}

    def supports(self, workload):
        reason = missing()
        if reason:
            return reason
        if self.remote and not self.address:
            return "it needs --dask-scheduler ADDRESS"
        if self.remote and workload.params.get("rate"):
            return ("an open-loop rate is kept by this machine's clock, which a "
                    "user's cluster does not share")
        return ""

    @property
    def parallelism(self):
        if self.remote:
            return self.found()[1]
        return self.nworkers

    @property
    def concurrency(self):
        return self.parallelism

    @property
    def interpreters(self):
        if self.remote:
            return self.found()[0]
        return self.nworkers

    def scaling(self):
        if self.remote:
            return None
        return ("dask workers", "dask worker", "chunk %d" % self.chunk)

    def libraries(self):
        return ["dask", "distributed"]

    def run_labels(self):
        """The user's cluster's memory and CPU, from its scheduler's own
        worker metrics, where it reports them for every worker; nothing
        otherwise (missing, never zero)."""
        if not self.remote or self._client is None:
            return {}
        workers = self._client.scheduler_info(n_workers=-1)["workers"].values()
        labels = {}
        for key, metric in ((schema.DASK_CLUSTER_MEMORY, "memory"),
                            (schema.DASK_CLUSTER_CPU, "cpu")):
            found = [worker.get("metrics", {}).get(metric) for worker in workers]
            if found and all(isinstance(value, (int, float)) for value in found):
                labels[key] = sum(found)
        if schema.DASK_CLUSTER_MEMORY in labels:
            labels[schema.DASK_CLUSTER_MEMORY] = int(labels[schema.DASK_CLUSTER_MEMORY])
        if schema.DASK_CLUSTER_CPU in labels:
            labels[schema.DASK_CLUSTER_CPU] = float(labels[schema.DASK_CLUSTER_CPU])
        return labels

    def metadata(self):
        meta = super().metadata()
        meta[schema.CHUNK_SIZE] = self.chunk
        if self.remote:
            meta[schema.DASK_SCHEDULER] = self.address
        else:
            meta[schema.DASK_WORKERS] = self.nworkers
        return meta

    # -- the cluster -------------------------------------------------------------
    def found(self):
        """(workers, threads) of the user's cluster: as the master found it
        (``--dask-cluster``), else by connecting."""
        if self._found is None:
            client = self.client()
            workers = client.scheduler_info(n_workers=-1)["workers"]
            self._found = (len(workers), sum(w.get("nthreads", 1) for w in workers.values())
                           or 1)
        return self._found

    def prime(self, sync_fn, async_fn, item):
        """Untimed, before the first batch: the workload's module sent to a
        user's cluster, and imported by every worker of either cluster, as a
        forked pool's processes have it already; no batch pays for it."""
        client = self.client()
        function = getattr(sync_fn, "function", sync_fn)
        if self.remote:
            self.send_code(client, function)
        name = getattr(function, "__module__", None)
        if name:
            import importlib

            try:
                client.run(importlib.import_module, name)
            except ImportError:
                pass    # said by the first batch, in one line

    def send_code(self, client, function):
        """Send a single-file workload module (--workload-module FILE.py) to
        the user's cluster, once (``Client.upload_file``): its workers
        import the item function by its module's name. A package is the
        user's to install there."""
        import sys

        from concbench.plugins import module_files

        name = getattr(function, "__module__", None) or ""
        if name in self._sent:      # looked at once: no batch pays for it again
            return
        self._sent.add(name)
        path = getattr(sys.modules.get(name), "__file__", None)
        if path and os.path.abspath(path) in module_files():
            client.upload_file(path)

    def where(self):
        return ("cluster at %s" % self.address) if self.remote else "local cluster"

    def client(self):
        if self._client is None:
            self.open()
        return self._client

    def open(self):
        """Start the local cluster (or connect to the user's), outside the
        timed batches."""
        if self._client is not None:
            return
        import logging

        from distributed import Client, LocalCluster

        # distributed's own log of a lost connection is a page of traceback;
        # a lost batch is said in one line (``BatchLost``).
        for name in list(logging.root.manager.loggerDict):
            if name.split(".")[0] in ("distributed", "tornado"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        # Items travel inside the tasks, as a user's client.map sends them:
        # rotate's images make a graph of tens of MiB a batch, which is this
        # model's cost to measure, not a warning to print at every batch.
        import warnings

        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        if self.remote:
            self._client = Client(check_address(self.address), timeout=CONNECT_TIMEOUT_S,
                                  set_as_default=False)
            return
        self._cluster = LocalCluster(
            n_workers=self.nworkers, threads_per_worker=1, processes=True,
            # No dashboard; its HTTP server on a port of its own, so that two
            # clusters of one worker (a race's rows side by side) never meet.
            dashboard_address=":0", silence_logs=logging.ERROR,
            preload=[__name__])
        self._client = Client(self._cluster, set_as_default=False)

    def close(self):
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    # -- a batch ---------------------------------------------------------------------
    def run(self, sync_fn, async_fn, items, clock=None):
        """Every item's result in item order; a closed-loop batch's items run
        bare and each task's results are stamped as they reach this process
        (as a process pool's are); an open-loop item keeps its own stamps."""
        from distributed import as_completed

        client = self.client()
        stamped = type(sync_fn) is Stamped
        function = sync_fn.function if stamped else sync_fn
        if self.remote:
            self.send_code(client, function)
        parts = chunked(items, self.chunk)
        done, received = [None] * len(parts), [None] * len(parts)
        try:
            futures = client.map(map_chunk, [function] * len(parts), parts, pure=False)
            position = {future.key: index for index, future in enumerate(futures)}
            for future, part in as_completed(futures, with_results=True, loop=client.loop):
                if future.status == "cancelled" or isinstance(part, BaseException):
                    # The scheduler went away: its tasks come back cancelled.
                    raise BatchLost("the %s lost the batch's tasks (%s)"
                                    % (self.where(), type(part).__name__))
                index = position[future.key]
                received[index] = now()
                done[index] = part
        except BatchLost:
            raise
        except Exception as exc:
            missing_code = import_error(exc)
            if missing_code is not None:
                # A task whose function the cluster cannot import (its
                # scheduler reads the task graph, its workers run it).
                raise BatchLost("the %s cannot import %s: install it on its workers, or "
                                "give it as one file with --workload-module FILE.py" % (
                                    self.where(), missing_code.name or missing_code)) from None
            if isinstance(exc, (OSError, TimeoutError)):
                # A connection to the scheduler that closed or timed out.
                raise BatchLost("the %s stopped answering (%s: %s)" % (
                    self.where(), type(exc).__name__, str(exc).splitlines()[0]
                    if str(exc) else "")) from None
            raise
        results = [result for part in done for result in part]
        if stamped:
            # The stamps in task order: each item ends when its task's
            # results reached this process.
            return ReceivedResults(results, received, self.chunk)
        if is_stamped(sync_fn):
            return list(arrived(results))
        return results

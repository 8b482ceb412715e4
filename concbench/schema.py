"""Every metadata key the suite writes into its pyperf JSON, defined once.

A key is a ``str`` (writers use it as a dict key, readers to look a value
up) that also says what it is: where it is written (``SUITE``: the same for
every benchmark of a run, from the command line; ``BENCH``: per benchmark,
by its workload or model; ``RUN``: per worker process, by the ``concbench``
hook), its type and unit, who writes it, how it combines over a run's
batches and over a benchmark's runs, and what it means. The documentation's
metadata table is made from these at every build (``python -m
concbench.schema`` prints it). Three families have names made at run
time: ``failures_<kind>``, ``<distribution>_version`` and the workloads'
own parameters, whose names their ``Option`` declares
(``concbench.workloads.base``). pyperf's own keys are listed in ``PYPERF``.
"""

import re
import sys

# No figure of a run is this large (seconds, bytes, counts): beyond it, a
# value is an error of the file, and would overflow the arithmetic. A
# benchmark's values, and the reference's batches beside them, lie within
# (SMALLEST, LARGEST).
LARGEST = 1e15
SMALLEST = 1e-12

SUITE, BENCH, RUN = "suite", "benchmark", "run"
# How a run key combines over the run's batches (concbench.run.run_figures).
COUNT, PEAK, LOW, FIRST, LABEL, ANY_YES, ALL_YES, EVERY, MIDDLE, MERGED = (
    "sum", "highest", "lowest", "first batch's", "last word", "yes if any", "yes if all",
    "each batch's, in order", "median", "histograms merged")
# How the report combines a run key over a benchmark's runs.
MEDIAN, TOTAL, EACH = "median", "sum", "each run"


class Key(str):
    def __new__(cls, name, kind, scope, writer, about, unit="", batches=None,
                runs=None, required=False):
        key = super().__new__(cls, name)
        key.kind, key.scope, key.writer, key.about = kind, scope, writer, about
        key.unit, key.batches, key.runs = unit, batches, runs
        # Every run (RUN) or benchmark (SUITE, BENCH) of a bench.py file
        # with run figures on carries it.
        key.required = required
        return key


KEYS = []


def _key(*args, **kwargs):
    key = Key(*args, **kwargs)
    KEYS.append(key)
    return key


def _run(name, kind, about, unit="", batches=COUNT, runs=MEDIAN, writer="hook",
         required=True):
    return _key(name, kind, RUN, writer, about, unit, batches, runs, required)


# -- the run, from the command line (concbench.run.cli) -------------------------------
PRESET = _key("preset", str, SUITE, "cli", "the preset that chose the matrix and its sizes", required=True)
ORDER = _key("order", str, SUITE, "cli", "`interleaved` (rounds in a seeded order) or `pyperf` (--pyperf-order)", required=True)
ORDER_SEED = _key("order_seed", int, SUITE, "cli", "the seed of the rounds' order", required=True)
SCENARIO = _key("scenario", str, SUITE, "cli", "scenario presets: which seed's experiment, and how")
SCENARIO_SCALED = _key("scenario_scaled", str, SUITE, "cli", "scenario presets: what was scaled down from the seed, and why")
MAX_TIME_S = _key("max_time_s", float, SUITE, "cli", "the whole run's time budget (--max-time)", "s")
PRECISION_TARGET_PCT = _key("precision_target_pct", float, SUITE, "cli", "--precision: the speedup interval's half-width aimed at", "%")
HARNESS_WITHOUT = _key("harness_without", str, SUITE, "cli", "what the harness left out around the batches (--without), to measure what it costs")
GIL_FORCED = _key("gil_forced", str, SUITE, "cli", "--gil on or off, as given")
GIL_EXPECTED = _key("gil_expected", str, SUITE, "cli", "`yes` or `no`: the GIL state asked for, against which runs are flagged", required=True)
GIL = _key("gil", str, SUITE, "cli", "`enabled` or `disabled` in the master, from `sys._is_gil_enabled()` where it exists", required=True)
CPUS_USABLE = _key("cpus_usable", int, SUITE, "cli", "the CPUs this run may use, read in the master before any pinning: its affinity set, capped by the smallest cgroup CPU quota of its cgroup and their parents, rounded up; the ideal and the efficiency divide by it", required=True)
CPUS_AFFINITY = _key("cpus_affinity", int, SUITE, "cli", "the CPUs of the master's affinity set (`os.sched_getaffinity`), before any pinning", required=True)
CPU_CORES = _key("cpu_physical_cores", int, SUITE, "cli", "physical cores (psutil), where known")
CPU_QUOTA = _key("cpu_quota", float, SUITE, "cli", "the smallest cgroup CPU quota of the run's cgroups (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), in CPUs, where there is one", "CPUs")
CPUS_LIMITED_BY = _key("cpus_limited_by", str, SUITE, "cli", "why `cpus_usable` is fewer than the logical CPUs (`cpu_count`): `affinity`, `quota`, or both")
CPUS_NOTE = _key("cpus_note", str, SUITE, "cli", "why a cgroup quota could not be read (the affinity set counted instead)")
CPUS_SIZED_FOR = _key("cpus_sized_for", int, SUITE, "cli", "the usable CPUs the worker counts were sized for: `--cpus`, else `cpus_usable`", required=True)
FREE_THREADED_BUILD = _key("free_threaded_build", str, SUITE, "cli", "`yes` on a build without the GIL (`Py_GIL_DISABLED`)", required=True)

# -- the benchmark: its workload (concbench.workloads.base and the workloads) -----
WORKLOAD = _key("workload", str, BENCH, "workload", "the workload's name", required=True)
WORKLOAD_KIND = _key("workload_kind", str, BENCH, "workload", "`cpu` or `io`", required=True)
ASYNC_FORM = _key("async_form", str, BENCH, "workload", "how the async item relates to the sync one", required=True)
ITEMS_PER_BATCH = _key("items_per_batch", int, BENCH, "workload", "items per batch (--items)", required=True)
LATENCY_SUM_S = _key("latency_sum_s", float, BENCH, "workload", "IO workloads: the sum of the items' drawn latencies", "s")
LATENCY_MAX_S = _key("latency_max_s", float, BENCH, "workload", "IO workloads: the longest drawn latency", "s")
HTTP_CLIENT_SYNC = _key("http_client_sync", str, BENCH, "http", "http: the sync models' client library")
HTTP_CLIENT_ASYNC = _key("http_client_async", str, BENCH, "http", "http: the async models' client library")
POOLS = _key("pools", str, BENCH, "http", "http: how clients and their connection pools are shared")
HTTP_ENDPOINT = _key("http_endpoint", str, BENCH, "http", "http: the server's endpoint the items request")
HTTP_SERVER = _key("http_server", str, BENCH, "http", "http: the load server, as it names itself")
HTTP_SERVER_PYTHON = _key("http_server_python", str, BENCH, "http", "http: the Python the load server runs on")
SERVER_BUSY_LIMIT = _key("server_busy_limit", float, BENCH, "http", "http: the `server_busy` above which a run is flagged server-bound")
DB_ENGINE = _key("db_engine", str, BENCH, "db", "db: `postgresql` or `mysql`")
DB_SERVER_VERSION = _key("db_server_version", str, BENCH, "db", "db: the server's version string")
DB_TLS = _key("db_tls", str, BENCH, "db", "db: `require` or `disable`")
DB_DRIVER_SYNC = _key("db_driver_sync", str, BENCH, "db", "db: the sync models' driver")
DB_DRIVER_ASYNC = _key("db_driver_async", str, BENCH, "db", "db: the async models' driver")
CEILING = _key("machine_ceiling", str, BENCH, "ceiling", "the machine's ceiling (concbench.run.ceiling): `processes` or `threads`, the pool in which N copies of one fixed piece of work ran at once; no model's row, in no race")

# -- the benchmark: its model (concbench.models.base and the models) --------------
MODEL = _key("model", str, BENCH, "model", "the model's name", required=True)
MODEL_FAMILY = _key("model_family", str, BENCH, "model", "the model's family (its file in models/)", required=True)
TIMED = _key("timed", str, BENCH, "model", "what the timed region holds, the workload's part included", required=True)
ITEM_SIDE = _key("item_side", str, BENCH, "model", "`sync` or `async`: which form of the item the model calls", required=True)
CONCURRENCY = _key("concurrency", int, BENCH, "model", "items in progress at once, or `unbounded`", required=True)
PARALLELISM = _key("parallelism", int, BENCH, "model", "items that can compute at once when they release the GIL", required=True)
INTERPRETERS = _key("interpreters", int, BENCH, "model", "interpreters, each with its own GIL, that run items", required=True)
SCALING = _key("scaling", str, BENCH, "model", "a point of a worker-count series: what is counted (`threads`)")
SCALING_UNIT = _key("scaling_unit", str, BENCH, "model", "the same in the singular (`thread`)")
SCALING_SERIES = _key("scaling_series", str, BENCH, "model", "the series' label when a family has several (`chunk 4`)")
POOL_LIFETIME = _key("pool_lifetime", str, BENCH, "model", "pools: `fresh` (created in every batch) or `reuse`")
CHUNK_SIZE = _key("chunk_size", int, BENCH, "model", "pools: items per task")
THREADS = _key("threads", int, BENCH, "model", "threads of a thread pool or of hybrid")
PROCESSES = _key("processes", int, BENCH, "model", "processes of a process pool")
STDLIB_DEFAULT = _key("stdlib_default", str, BENCH, "model", "pools named `-default`: the standard library's executor whose size (on the machine that ran it) the count is, `ThreadPoolExecutor()` or `ProcessPoolExecutor()`")
START_METHOD = _key("start_method", str, BENCH, "model", "process pools: `fork`, `spawn` or `forkserver`")
DASK_WORKERS = _key("dask_workers", int, BENCH, "model", "dask-N-chunk-C: the worker processes (one thread each) of the local cluster the row's worker started")
DASK_SCHEDULER = _key("dask_scheduler", str, BENCH, "model", "dask-cluster-chunk-C: the address of the user's scheduler (`--dask-scheduler`)")
LOOP = _key("loop", str, BENCH, "model", "event-loop models: `asyncio` or `uvloop`")
CONCURRENCY_LIMIT = _key("concurrency_limit", str, BENCH, "model", "event-loop models: a semaphore's size, or `none`")
TASK_FACTORY = _key("task_factory", str, BENCH, "model", "eager: the task factory")
PAIRED_WITH = _key("paired_with", str, BENCH, "matrix", "`itself unrecorded` under --latency-overhead: the batches beside this benchmark's ran its own model without recording latencies, so its speedup is what recording costs")
LATENCY_FROM = _key("latency_from", str, BENCH, "model", "where an item's latency starts: `item` (its own call: models that take one item after another), `batch` (the batch's start: models handed every item at once); in an open-loop run (`rate`), each item's scheduled arrival", required=True)
BESIDE = _key("beside", str, BENCH, "matrix", "a race's comparison side by side (`<workload>/<model> beside <leader>`): the race's leader, whose batches ran beside this model's in its worker, alternating, in place of the reference's; the race reads these pairs directly, and the benchmark is not a row of the table")
CONTROL_OF = _key("control_of", str, BENCH, "model", "the A/A control (`<workload>/control`): the model it runs again, the reference")
INTERPRETERS_IMPL = _key("interpreters_impl", str, BENCH, "model", "subinterpreter pools: the implementation (the stdlib's or the backport)")

# -- the benchmark: where a workload or model from elsewhere came from (concbench.plugins)
WORKLOAD_PLUGIN = _key("workload_plugin", str, BENCH, "plugins", "a plugin workload: the distribution it came from")
WORKLOAD_PLUGIN_VERSION = _key("workload_plugin_version", str, BENCH, "plugins", "a plugin workload: its distribution's version")
WORKLOAD_MODULE = _key("workload_module", str, BENCH, "plugins", "a workload from --workload-module: the file or module as given")
MODEL_PLUGIN = _key("model_plugin", str, BENCH, "plugins", "a plugin model: the distribution it came from")
MODEL_PLUGIN_VERSION = _key("model_plugin_version", str, BENCH, "plugins", "a plugin model: its distribution's version")
PLUGIN_KEYS = {WORKLOAD: (WORKLOAD_PLUGIN, WORKLOAD_PLUGIN_VERSION, WORKLOAD_MODULE),
               MODEL: (MODEL_PLUGIN, MODEL_PLUGIN_VERSION, None)}

# -- the benchmark: the matrix (concbench.run.matrix) ----------------------------------
BATCH_CHECK = _key("batch_check", str, BENCH, "matrix", "how every batch's result is checked", required=True)
REFERENCE_MODEL = _key("reference_model", str, BENCH, "matrix", "the model speedups are measured against", required=True)
WORKLOAD_PARAMS = _key("workload_params", str, BENCH, "matrix", "the workload's parameters as the report shows them", required=True)
PAIRING = _key("pairing", str, BENCH, "matrix", "how the speedup pairs this benchmark's batches with the reference's: `worker` (its worker runs the reference's batches alternating with its own, A B B A, and each batch is paired with its neighbour), `round` (its run with the reference's run of the same round), `none` (the reference itself)", required=True)
# Its values.
IN_WORKER, BY_ROUND, NONE = "worker", "round", "none"

# -- the run: figures of its timed batches (concbench.run.run_figures, concbench.run.batch) --
MEM_TREE_PEAK = _run("mem_tree_peak", int, "the peak, over the timed batches, of the PSS summed over the worker and all its descendants (pool workers included)", "bytes", PEAK)
MEM_TREE_BASE = _run("mem_tree_base", int, "the same sum just before the first timed batch (interpreter, imports, inputs); `mem_tree_peak - mem_tree_base` is what the model added", "bytes", FIRST)
MEM_METHOD = _run("mem_method", str, "how memory was measured: `pss` (Linux), `uss` or `rss` (psutil elsewhere)", batches=LABEL, runs=EACH)
MEM_SAMPLES = _run("mem_samples", int, "how many samples the peak was taken from", "samples")
CPU_TREE = _run("cpu_tree", float, "user + system CPU of the worker and all its descendants over the timed batches, pool workers that already exited included, whoever reaped them", "s", runs=TOTAL + " (CPU per item); median of CPU / wall time (cores)")
CPU_TREE_SYSTEM = _run("cpu_tree_system", float, "the system part of `cpu_tree`", "s")
CPU_COMPLETE = _run("cpu_complete", str, "`yes`, or `no` when a process seen during a batch left the tree without being reaped by the worker or by a process still in the tree: its CPU may be missing, and the report leaves the run out of the ideal", batches=ALL_YES, runs=EACH)
CTX_SWITCHES_VOLUNTARY = _run("ctx_switches_voluntary", int, "voluntary context switches of the same tree over the timed batches")
CTX_SWITCHES_INVOLUNTARY = _run("ctx_switches_involuntary", int, "involuntary context switches of the same tree over the timed batches")
THREADS_PEAK = _run("threads_peak", int, "the most threads the tree had at once", batches=PEAK)
PROCESSES_PEAK = _run("processes_peak", int, "the most processes the tree had at once", batches=PEAK)
ITEMS = _run("items", int, "items run and checked over the run's values", runs=TOTAL, writer="workload")
FAILURES = _run("failures", int, "failed items (http: timeouts, connection errors, status >= 400, short bodies; db: connection, query, timeout), and `failures_<kind>` per kind", runs=TOTAL, writer="workload")
PROBE_S = _run("probe_s", float, "the least time, over the run's batches, of a fixed pure-Python loop run just before each batch (the machine's speed then); none with --without probe", "s", LOW, EACH, writer="batches")
GIL_ENABLED = _run("gil_enabled", str, "`yes` or `no`: whether the GIL was on while the run's batches ran (`sys._is_gil_enabled()`, read after the libraries were imported, before and after every batch; `yes` if any reading was)", batches=ANY_YES, runs=EACH, writer="batches")
GIL_ENABLED_BY = _run("gil_enabled_by", str, "on a free-threaded build, the modules whose import re-enabled the GIL, from the interpreter's warning", batches=LABEL, runs=EACH, writer="batches", required=False)
INTERPRETER_GIL = _run("interpreter_gil", str, "subinterpreter models: the GIL the pool's interpreters were configured with, read from the interpreters themselves after each batch (`own`, `shared`, or both joined by `/`)", batches=LABEL, runs=EACH, writer="model", required=False)
BYTES_IN = _run("bytes_in", int, "http: response body bytes the clients received", "bytes", writer="http", required=False)
BYTES_OUT = _run("bytes_out", int, "http: request bytes the clients sent, as the server received them", "bytes", writer="http", required=False)
BYTES_OUT_SERVER = _run("bytes_out_server", int, "http: bytes the server sent", "bytes", writer="http", required=False)
SERVER_REQUESTS = _run("server_requests", int, "http: requests the server served", writer="http", required=False)
SERVER_CPU = _run("server_cpu", float, "http: the load server's CPU during the batches", "s", writer="http", required=False)
SERVER_BUSY = _run("server_busy", float, "http: `server_cpu` / wall time of the batches; above `server_busy_limit` the server may have been the bottleneck", "share", batches=None, runs=EACH, required=False)
LATENCY_HIST = _run("latency_hist", str, "the latency of every item of the run's batches (of one item in `latency_every` where that is set), from where `latency_from` says to when its result reached the model's caller: a histogram of buckets 1% wide, `largest;bucket:count,...` (concbench.item_stamps)", "s", MERGED, EACH, writer="batches", required=False)
LATENCY_EVERY = _run("latency_every", int, "asyncio-serial, uvloop-serial and threads-N (one item a task): `latency_hist` holds one item in this many, picked at random, because timing each would have cost more than 0.5% of a batch (concbench.item_sampling.ItemSampler); absent when every item was timed", batches=LABEL, runs=EACH, writer="model", required=False)
DASK_CLUSTER_MEMORY = _run("dask_cluster_memory", int, "dask-cluster-chunk-C: the memory of the user's cluster's workers as its scheduler reported it after each batch (the sum of their RSS), its peak; absent where the scheduler reports none. Not in the local tree's figures, which hold only this side", "bytes", PEAK, writer="model", required=False)
DASK_CLUSTER_CPU = _run("dask_cluster_cpu", float, "dask-cluster-chunk-C: the CPU of the user's cluster's workers as its scheduler reported it after each batch (percent of one CPU, summed over the workers), its peak; absent where the scheduler reports none", "%", PEAK, writer="model", required=False)
ARRIVAL_RATE_ACHIEVED = _run("arrival_rate_achieved", float, "open loop (`rate`): results per second the model delivered against its schedule, `rate` / (1 + g) where g is how fast its items' lateness grew (seconds per second of schedule, from the medians of the first and the last quarter of the items), in the slowest batch; below 95% of `rate` the row is flagged overloaded", "1/s", LOW, EACH, writer="batches", required=False)
PAIRED_REFERENCE_S = _run("paired_reference_s", str, "pairing `worker`: the reference's batches run beside the run's values, one per value and in the values' order, space-separated", "s", EVERY, EACH, writer="batches", required=False)
PAIR_GAP_S = _run("pair_gap_s", float, "pairing `worker`: the median time from the start of a pair's first batch to the start of its second", "s", MIDDLE, writer="batches", required=False)
WARMUP_REFERENCE_S = _run("warmup_reference_s", str, "pairing `worker`: the reference's batches beside the warm-up pairs, space-separated (the report and the next rounds compare the first batch with the rest: a warm-up is kept only where the first batch is slower)", "s", FIRST, EACH, writer="batches", required=False)
MODEL_PROCESS = _run("model_process", str, "pairing `worker` on Linux: `worker` (the model ran in the worker pyperf started, the reference's batches in a copy forked from it before the model opened) or `forked` (the copy ran the model, the worker the reference); the side alternates from one run of the benchmark to the next, so that a difference between a process and its forked copy is not a bias of every row", batches=LABEL, runs=EACH, writer="batches", required=False)
PAIRED_REFERENCE_FAILURES = _run("paired_reference_failures", int, "pairing `worker`: failed items of the reference's batches run beside the run's values (checked like the run's own)", runs=TOTAL, writer="batches", required=False)
ROUND = _run("round", int, "the round the run belongs to (with `--pyperf-order`: its position among the benchmark's runs)", batches=None, runs=EACH, writer="rounds")

BY_NAME = {key: key for key in KEYS}

# -- families: names made at run time ------------------------------------------------
FAILURES_KIND = re.compile(r"failures_\w+")
VERSION = re.compile(r"\w+_version")


def failures_key(kind):
    """The run key counting failures of ``kind`` ("short body" -> failures_short_body)."""
    return "%s_%s" % (FAILURES, kind.replace(" ", "_"))


def failure_kind(name):
    """The kind a failures_<kind> key counts, None for any other key."""
    return name[len(FAILURES) + 1:] if FAILURES_KIND.fullmatch(name) else None


def version_key(distribution):
    """The key of a distribution's version (Pillow -> pillow_version)."""
    return "%s_version" % distribution.lower()


def batches_of(name):
    """How the run key ``name`` combines over a run's batches (None: it is
    not a per-batch figure)."""
    if name in BY_NAME:
        return BY_NAME[name].batches
    return COUNT if FAILURES_KIND.fullmatch(name) else None


def beside_name(name, leader):
    """The name of benchmark ``name`` (``<workload>/<model>``) run beside
    the model ``leader`` (``BESIDE``)."""
    return "%s beside %s" % (name, leader)


def beside_of(name):
    """(``<workload>/<model>``, the leader) of a benchmark run beside
    another (``beside_name``), None for any other name."""
    own, found, leader = name.partition(" beside ")
    return (own, leader) if found else None


def known(name, parameters=()):
    """Whether ``name`` is a key of the suite, of one of its families, one of
    ``parameters`` (the benchmark's workload's), or pyperf's own."""
    return (name in BY_NAME or name in parameters or name in PYPERF
            or FAILURES_KIND.fullmatch(name) is not None
            or VERSION.fullmatch(name) is not None)


#: pyperf's own metadata keys (pyperf 2.10), which the suite does not write.
PYPERF = frozenset((
    "aslr", "boot_time", "command", "command_max_rss", "cpu_affinity", "cpu_config", "cpu_count",
    "cpu_freq", "cpu_machine", "cpu_model_name", "cpu_temp", "date",
    "description", "duration", "hooks", "hostname", "inner_loops",
    "load_avg_1min", "loops", "mem_max_rss", "mem_peak", "mem_peak_pagefile_usage", "name",
    "perf_version", "platform", "python_cflags", "python_compiler",
    "python_config_args", "python_executable", "python_hash_seed",
    "python_implementation", "python_unicode", "python_version",
    "runnable_threads", "timer", "tags", "unit", "uptime", "tracemalloc_peak",
    "track_memory"))


# -- the documentation's table ---------------------------------------------------------

def markdown_table():
    lines = ["| key | where | type | unit | over batches | over runs | meaning |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key in KEYS:
        lines.append("| `%s` | %s (%s) | %s | %s | %s | %s | %s |" % (
            key, key.scope, key.writer, key.kind.__name__, key.unit,
            key.batches or "", key.runs or "", key.about))
    lines.append("| `failures_<kind>` | run (workload) | int |  | sum | sum | "
                 "failed items of one kind |")
    lines.append("| `<distribution>_version` | suite or benchmark | str |  |  |  | "
                 "the version of a library the run used (pyperf, Pillow, uvloop, "
                 "psutil, a workload's client or driver) |")
    return "\n".join(lines)


def main(argv):
    if not argv:
        print(markdown_table())
        return 0
    print("usage: python -m concbench.schema   (prints the metadata table)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Benchmark Python's concurrency models under one pyperf Runner.

Registers a matrix of workloads (encode, rotate, sleep, http, db) x
concurrency models (sequential, threads-N, processes-N-chunk-C, asyncio,
uvloop, asyncio-serial, hybrid-N) as ``<workload>/<model>`` benchmarks, in a fixed order. Each timed
value is one batch; every batch's results are checked against the sequential
reference outside the timed region, and a mismatch stops the run.

    ./bench.py -o data.json
    ./bench.py --preset quick --workload rotate --model 'threads-*' -o r.json
    ./bench.py --list
"""

import argparse
import atexit
import fnmatch
import os
import sys
import time
import traceback
import urllib.parse

import pyperf

import metrics

import models
import workloads
from models.base import BatchClock
from presets import DEFAULT_PRESET, PRESETS, SCENARIOS
from servers import raise_nofile_limit
from workloads.base import CheckError

PROG = "bench.py"

# Options that override a preset's workload parameters:
# parameter -> (option, converter arguments, help).
WORKLOAD_OPTIONS = {
    "items": ("--items", (int, 1, 10_000_000), "items per batch"),
    "seed": ("--seed", (int, 0, 2**32 - 1), "seed of the generated inputs"),
    "latency_ms": ("--latency-ms", (float, 0.0, 60_000.0),
                   "mean latency of an IO item, in ms"),
    "jitter_ms": ("--jitter-ms", (float, 0.0, 60_000.0),
                  "latencies are drawn uniformly in latency +- jitter, in ms"),
    "image_size": ("--image-size", (int, 1, 8192),
                   "width and height of rotate's images, in pixels"),
    "rotations": ("--rotations", (int, 1, 1000),
                  "1-degree rotations per rotate item"),
    "size_bytes": ("--size-bytes", (int, 0, 100 * 1024 * 1024),
                   "size of each HTTP response, in bytes"),
    "timeout_s": ("--http-timeout", (float, 0.001, 3600.0),
                  "timeout of each HTTP request, in seconds"),
    "http_client": ("--http-client", ("requests+aiohttp", "httpx"),
                    "HTTP client libraries: requests for sync models and aiohttp "
                    "for async ones, or httpx for both"),
    "keepalive": ("--keepalive", ("on", "off"),
                  "reuse HTTP connections, or open one per request"),
    "endpoint": ("--http-endpoint", ("work", "httpbin"),
                 "the load server's /work, or httpbin's /delay and /bytes"),
    "db_driver": ("--db-driver", ("psycopg", "psycopg+asyncpg", "pymysql+aiomysql"),
                  "database drivers (sync+async); default: psycopg for "
                  "PostgreSQL, pymysql+aiomysql for MySQL/MariaDB"),
    "db_connections": ("--db-connections", ("per-item", "pooled"),
                       "connect per query, or reuse connections opened before "
                       "the timed region"),
    "query_timeout_s": ("--db-timeout", (float, 0.001, 3600.0),
                        "timeout of each database query, in seconds"),
}
# Options of ours that workers must receive too.
FORWARDED = (["preset", "workload", "model", "server_url", "db_url",
              "no_run_figures"] + list(WORKLOAD_OPTIONS))
# Parameters naming a server: parameter -> option. The local load server
# stands in for a missing --server-url; nothing stands in for --db-url.
SERVER_PARAMS = {"server_url": "--server-url", "db_url": "--db-url"}
REQUIRED_SERVERS = ("db_url",)


def fail(message, status=2):
    print("%s: error: %s" % (PROG, message), file=sys.stderr)
    sys.exit(status)


def converter(spec, option):
    """A type for argparse: a number within bounds, or one of some words."""
    if isinstance(spec[0], str):
        def convert(text):
            if text not in spec:
                raise argparse.ArgumentTypeError(
                    "%s: %r is not one of %s" % (option, text, ", ".join(spec)))
            return text
        return convert
    kind, low, high = spec

    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                "%s: %r is not a number" % (option, text)) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                "%s: %s is out of range [%s, %s]" % (option, text, low, high))
        return value
    return convert


def server_url(text):
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            "%r is not an http:// or https:// URL with a host" % text)
    return text.rstrip("/")


def db_url(text):
    from workloads.db import parse_url

    try:
        parse_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_options(parser):
    group = parser.add_argument_group("concurrency benchmark")
    group.add_argument("--preset", default=DEFAULT_PRESET, choices=sorted(PRESETS),
                       metavar="NAME",
                       help="sizes and model lists: quick, default, full, or a "
                       "seed's scenario (%s) (default: %%(default)s)"
                       % ", ".join(SCENARIOS))
    group.add_argument("--workload", metavar="NAME[,NAME...]",
                       help="run only these workloads (%s)"
                       % ", ".join(workloads.REGISTRY))
    group.add_argument("--model", metavar="PATTERN[,PATTERN...]",
                       help="run only the preset's models matching these glob "
                       "patterns; a plain model name (threads-64) is run even "
                       "if the preset lacks it")
    group.add_argument("--list", action="store_true",
                       help="print the benchmarks that would run, and exit")
    group.add_argument("--keep-earlier", action="store_true",
                       help="if the -o file exists, move it to earlier/ beside "
                       "it (and say so) instead of refusing")
    group.add_argument("--no-run-figures", action="store_true",
                       help="leave out the per-run figures (memory, CPU, "
                       "failures), for example to measure what they cost")
    group.add_argument("--server-url", type=server_url, metavar="URL",
                       help="run the http workload against this server (python "
                       "-m servers on another machine, or an httpbin) instead of "
                       "starting the local one")
    group.add_argument("--db-url", type=db_url, metavar="URL",
                       help="run the db workload against this server: "
                       "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE or "
                       "mysql://... (without it, db is left out)")
    for param, (option, spec, help_text) in WORKLOAD_OPTIONS.items():
        group.add_argument(option, dest=param, type=converter(spec, option),
                           help=help_text + " (overrides the preset)")


def forward_options(cmd, args):
    """pyperf's add_cmdline_args: give workers the same matrix."""
    for dest in FORWARDED:
        value = getattr(args, dest)
        if value is True:
            cmd.append("--" + dest.replace("_", "-"))
        elif value is not None and value is not False:
            option = WORKLOAD_OPTIONS[dest][0] if dest in WORKLOAD_OPTIONS \
                else "--" + dest.replace("_", "-")
            cmd.extend((option, str(value)))


def preset_from_argv(argv):
    """The preset decides pyperf's defaults, so read it before the Runner."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--preset", default=DEFAULT_PRESET)
    known, _ = parser.parse_known_args(argv)
    return PRESETS.get(known.preset, PRESETS[DEFAULT_PRESET])


# -- the matrix -------------------------------------------------------------

class Bench:
    """One cell of the matrix: a workload run by a model."""

    def __init__(self, workload, model):
        self.workload = workload
        self.model = model
        self.name = "%s/%s" % (workload.name, model.name)
        self.warned = False
        self._prepared = None

    def metadata(self):
        meta = self.workload.metadata()
        meta.update(self.model.metadata())
        note = self.workload.timed_note(self.model)
        if note:
            meta["timed"] = "%s; %s" % (meta["timed"], note)
        meta.update(library_versions(self.workload.libraries()
                                     + self.model.libraries()))
        meta["batch_check"] = ("every item's result equals the sequential "
                               "reference, computed outside the timed region")
        return meta

    def prepare(self):
        """Inputs, reference and reused pools: once per worker, not timed."""
        if self._prepared is None:
            items = self.workload.make_items()
            reference = self.workload.reference(items)
            sync_fn = self.workload.sync_function()
            async_fn = self.workload.async_function()
            self.model.open()
            atexit.register(self.model.close)
            self.workload.open(self.model)
            atexit.register(self.workload.close)
            self._prepared = (items, reference, sync_fn, async_fn)
        return self._prepared


def split(text):
    return [part.strip() for part in text.split(",") if part.strip()]


def select_models(preset_names, patterns):
    """The preset's models, filtered by glob patterns, plus explicit names."""
    preset_models = [models.parse(name) for name in preset_names]
    if not patterns:
        return preset_models
    chosen = []
    for pattern in patterns:
        if any(char in pattern for char in "*?["):
            chosen.extend(m for m in preset_models
                          if fnmatch.fnmatchcase(m.name, pattern))
        else:
            chosen.append(models.parse(pattern))
    # Keep the preset's order, then explicit models in the order given.
    order = {m.name: i for i, m in enumerate(preset_models)}
    unique = {}
    for model in chosen:
        unique.setdefault(model.name, model)
    return sorted(unique.values(),
                  key=lambda m: order.get(m.name, len(order)))


def missing_urls(cls, args):
    """The options naming a server this workload needs and was not given."""
    return [SERVER_PARAMS[param] for param in REQUIRED_SERVERS
            if param in cls.PARAMS and not getattr(args, param)]


def build_matrix(args, left_out=None):
    """The benchmarks to run. A preset's workload that needs a URL the user
    did not give is left out, with the reason added to ``left_out``."""
    preset = PRESETS[args.preset]
    if args.workload:
        names = split(args.workload)
        unknown = [name for name in names if name not in workloads.REGISTRY]
        if unknown or not names:
            fail("unknown workload %r; workloads are: %s"
                 % (",".join(unknown) or args.workload,
                    ", ".join(workloads.REGISTRY)))
        names = [name for name in workloads.REGISTRY if name in names]
        absent = [name for name in names if name not in preset["models"]]
        if absent:
            fail("preset %s has no %s workload; its workloads are: %s"
                 % (args.preset, ",".join(absent), ", ".join(preset["models"])))
        for name in names:
            missing = missing_urls(workloads.get(name), args)
            if missing:
                fail("the %s workload needs %s (see --help)"
                     % (name, " and ".join(missing)))
    else:
        names = []
        for name in preset["workloads"]:
            missing = missing_urls(workloads.get(name), args)
            if missing:
                if left_out is not None:
                    left_out.append("%s: left out, it needs %s"
                                    % (name, " and ".join(missing)))
            else:
                names.append(name)

    classes = {name: workloads.get(name) for name in names}
    for param, (option, *_rest) in WORKLOAD_OPTIONS.items():
        if getattr(args, param) is None:
            continue
        if not any(param in cls.PARAMS for cls in classes.values()):
            fail("%s does not apply to the selected workloads (%s)"
                 % (option, ", ".join(names)))

    for param, option in SERVER_PARAMS.items():
        if getattr(args, param) and not any(param in cls.PARAMS
                                            for cls in classes.values()):
            fail("%s does not apply to the selected workloads (%s)"
                 % (option, ", ".join(names)))

    patterns = split(args.model) if args.model else None
    matrix = []
    for name in names:
        cls = classes[name]
        params = dict(preset["workloads"].get(name, {}))
        for param in SERVER_PARAMS:
            if param in cls.PARAMS and getattr(args, param):
                params[param] = getattr(args, param)
        for param in WORKLOAD_OPTIONS:
            value = getattr(args, param)
            if value is not None and param in cls.PARAMS:
                params[param] = value
        try:
            workload = cls(**params)
            chosen = select_models(preset["models"][name], patterns)
        except ValueError as exc:   # ModelError included
            fail(str(exc))
        matrix.extend(Bench(workload, model) for model in chosen)

    if patterns:
        for pattern in patterns:
            if not any(fnmatch.fnmatchcase(b.model.name, pattern) for b in matrix):
                fail("model pattern %r matches no model of preset %r; its "
                     "models are: %s" % (pattern, args.preset, ", ".join(
                         sorted({m for n in names
                                 for m in preset["models"][n]}))))
    return matrix


# -- the timed function (runs in pyperf workers) -----------------------------

def time_batches(loops, bench):
    items, reference, sync_fn, async_fn = bench.prepare()
    workload = bench.workload
    run = bench.model.run
    elapsed = 0.0
    for _ in range(loops):
        try:
            before = workload.before_batch()
            probe = metrics.BatchProbe() if metrics.active() else None
            clock = BatchClock()
            results = run(sync_fn, async_fn, items, clock)
            clock.stop()
            batch_time = clock.elapsed
            tree = probe.finish() if probe else {}
            elapsed += batch_time
            figures = workload.check(results, reference)
            figures.update(workload.after_batch(before, batch_time))
        except CheckError as exc:
            worker_fail("%s: result check failed: %s" % (bench.name, exc))
        except Exception as exc:
            traceback.print_exc()
            worker_fail("%s: the batch raised %s: %s"
                        % (bench.name, type(exc).__name__, exc))
        if figures.get("items") and figures.get("failures") == figures["items"]:
            # A server that died or refuses everything: counting failures
            # for every remaining batch and benchmark would say nothing.
            kinds = ", ".join("%s %d" % (key[len("failures_"):], value)
                              for key, value in sorted(figures.items())
                              if key.startswith("failures_"))
            worker_fail("%s: every item of the batch failed (%s); is the server "
                        "down?" % (bench.name, kinds or figures["failures"]))
        busy = figures.pop("server_busy", 0.0)
        if busy > workload.SERVER_BUSY_LIMIT and not bench.warned:
            bench.warned = True
            print("WARNING: %s: the server used %.0f%% of a CPU during the batch; "
                  "it may have been the bottleneck (flagged in the results)"
                  % (bench.name, busy * 100), file=sys.stderr, flush=True)
        figures.update(tree)
        figures["timed_seconds"] = batch_time
        metrics.record(figures)
    return elapsed


def worker_fail(message):
    print("ERROR: %s" % message, file=sys.stderr, flush=True)
    sys.exit(1)


# -- metadata for every benchmark -------------------------------------------

def library_versions(distributions):
    import importlib.metadata

    versions = {}
    for dist in distributions:
        try:
            versions["%s_version" % dist.lower()] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def suite_metadata(preset_name):
    import sysconfig

    meta = {"preset": preset_name}
    preset = PRESETS[preset_name]
    if preset.get("about"):
        meta["scenario"] = preset["about"]
    if preset.get("scaled"):
        meta["scenario_scaled"] = preset["scaled"]
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    meta["gil"] = "enabled" if is_gil_enabled is None or is_gil_enabled() \
        else "disabled"
    meta["free_threaded_build"] = \
        "yes" if sysconfig.get_config_var("Py_GIL_DISABLED") else "no"
    meta.update(library_versions(("pyperf", "Pillow", "uvloop", "psutil")))
    return meta


# -- progress in the master process -----------------------------------------

def format_duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % divmod(seconds, 60)


class Progress:
    def __init__(self, total):
        self.total = total
        self.start = time.monotonic()

    def show(self, index, name):
        elapsed = time.monotonic() - self.start
        if index:
            remaining = elapsed / index * (self.total - index)
            eta = ", about %s left" % format_duration(remaining)
        else:
            eta = ""
        print("[%d/%d] %s (elapsed %s%s)"
              % (index + 1, self.total, name, format_duration(elapsed), eta),
              file=sys.stderr, flush=True)


# -- the load server and descriptors (master process) -----------------------

def uses_sockets(bench):
    return any(param in bench.workload.params
               for param in SERVER_PARAMS)


def in_flight(bench):
    return bench.model.in_flight(bench.workload.params["items"])


def check_descriptors(matrix, hard_limit):
    """Say before starting when a model needs more sockets than allowed."""
    if hard_limit is None:
        return
    for bench in matrix:
        if not uses_sockets(bench):
            continue
        connections = in_flight(bench)
        needed = connections + 64
        if needed > hard_limit:
            fail("%s keeps up to %d connections open, but the hard limit on open "
                 "files is %d; raise it (ulimit -Hn, or limits.conf) or lower the "
                 "concurrency" % (bench.name, connections, hard_limit))


def preflight(matrix):
    """Each workload checks its server before any benchmark starts."""
    by_workload = {}
    for bench in matrix:
        by_workload.setdefault(bench.workload, {})[bench.name] = in_flight(bench)
    for workload, counts in by_workload.items():
        try:
            workload.preflight(counts)
        except ValueError as exc:
            fail(str(exc))


def check_server(url):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url + "/get", timeout=5):
            pass
    except urllib.error.HTTPError:
        pass    # it answers; the workload counts what it answers
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        fail("--server-url %s does not answer: %s" % (url, reason))


def stop_on_sigterm():
    """Turn SIGTERM into SystemExit so that exit handlers stop the server."""
    import signal

    def handler(signum, frame):
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


# -- main -------------------------------------------------------------------

def check_output(args):
    """Refuse before any benchmark runs, not after the last one."""
    if args.output and args.append:
        fail("give -o or --append, not both")
    if args.append:
        directory = os.path.dirname(os.path.abspath(args.append))
        if not os.access(directory, os.W_OK):
            fail("cannot write %s: directory %s is not writable"
                 % (args.append, directory))
    path = args.output
    if not path:
        return
    if os.path.exists(path) and not args.keep_earlier:
        fail("%s already exists; choose another -o file, use --append %s "
             "to add to it, or --keep-earlier to move it aside" % (path, path))
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        fail("cannot write %s: directory %s does not exist" % (path, directory))
    if not os.access(directory, os.W_OK):
        fail("cannot write %s: directory %s is not writable" % (path, directory))


class ResultsFile:
    """-o and --append, written here rather than by pyperf.

    pyperf rewrites the file in place after each benchmark, so an interrupt
    during a write leaves a truncated JSON. Here every write goes to a new file
    in the same directory, flushed to disk, then renamed over the old one: the
    file is always absent or a valid pyperf JSON of the completed benchmarks.
    """

    def __init__(self, path, append):
        self.path = path
        self.suite = None
        if append and os.path.exists(path):
            try:
                self.suite = pyperf.BenchmarkSuite.load(path)
            except Exception as exc:   # pyperf raises several kinds here
                fail("--append %s: not a pyperf JSON file (%s)"
                     % (path, " ".join(str(exc).split()) or type(exc).__name__))

    def add(self, bench):
        if self.suite is None:
            self.suite = pyperf.BenchmarkSuite([bench])
        else:
            self.suite.add_runs(bench)
        directory, name = os.path.split(os.path.abspath(self.path))
        suffix = ".gz" if name.endswith(".gz") else ""
        temporary = os.path.join(directory, ".%s.%d.tmp%s" % (name, os.getpid(), suffix))
        try:
            self.suite.dump(temporary)
            with open(temporary, "rb") as written:
                os.fsync(written.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise


def adopt_orphans():
    """Make this process the reaper of its descendants' orphans (Linux), so
    that pool processes of a worker killed by pyperf can still be found and
    stopped at exit."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def stop_descendants(timeout=3.0):
    """At exit: no process this run started outlives it."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            child.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(children, timeout=timeout)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=timeout)


def move_earlier(path):
    """--keep-earlier: move an existing -o file into earlier/ beside it, under
    its name and modification time, so that no result is lost or mixed in."""
    if not os.path.exists(path):
        return
    directory = os.path.join(os.path.dirname(os.path.abspath(path)), "earlier")
    stem, ext = os.path.splitext(os.path.basename(path))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(os.path.getmtime(path)))
    try:
        os.makedirs(directory, exist_ok=True)
        target = os.path.join(directory, "%s-%s%s" % (stem, stamp, ext))
        count = 1
        while os.path.exists(target):
            count += 1
            target = os.path.join(directory, "%s-%s-%d%s" % (stem, stamp, count, ext))
        os.rename(path, target)
    except OSError as exc:
        fail("cannot move the earlier %s aside: %s" % (path, exc))
    print("%s: moved the earlier %s to %s" % (PROG, path, os.path.relpath(target)),
          file=sys.stderr, flush=True)


def main():
    preset = preset_from_argv(sys.argv[1:])
    runner = pyperf.Runner(loops=1, add_cmdline_args=forward_options,
                           **preset["runner"])
    runner.argparser.prog = PROG
    runner.argparser.error = lambda message: fail(message)
    add_options(runner.argparser)

    args = runner.argparser.parse_args()
    hard_limit = raise_nofile_limit()
    if not args.worker:
        check_output(args)
    left_out = []
    matrix = build_matrix(args, left_out)
    if args.list:
        for bench in matrix:
            print(bench.name)
        for line in left_out:
            print("# " + line, file=sys.stderr)
        return
    if not matrix:
        fail("the selection is empty%s" % "".join("; " + line for line in left_out))

    results = None
    needs_server = any("server_url" in b.workload.params for b in matrix)
    if not args.worker:
        if args.output or args.append:
            results = ResultsFile(args.output or args.append,
                                  append=bool(args.append))
        check_descriptors(matrix, hard_limit)
        preflight(matrix)
        if needs_server and args.server_url:
            check_server(args.server_url)
        if args.output and args.keep_earlier:
            move_earlier(args.output)

    runner.parse_args()
    if not args.no_run_figures:
        enable_run_figures(runner.args)
    if not args.worker:
        adopt_orphans()
        atexit.register(stop_descendants)
        # Written by ResultsFile, not by pyperf.
        runner.args.output = runner.args.append = None
    if not args.worker and needs_server and not args.server_url:
        stop_on_sigterm()
        from servers.process import LocalServer
        server = LocalServer()
        try:
            url = server.start()
        except RuntimeError as exc:
            fail(str(exc), status=1)
        atexit.register(server.stop)
        # Workers receive the URL through forward_options.
        runner.args.server_url = args.server_url = url
        matrix = build_matrix(args)
    runner.metadata.update(suite_metadata(args.preset))
    scaled = PRESETS[args.preset].get("scaled")
    if scaled and not args.worker:
        print("%s: scaled down on purpose: %s" % (args.preset, scaled),
              file=sys.stderr, flush=True)
    progress = None if args.worker else Progress(len(matrix))
    for index, bench in enumerate(matrix):
        if progress:
            progress.show(index, bench.name)
        try:
            result = runner.bench_time_func(bench.name, time_batches, bench,
                                            metadata=bench.metadata())
            if results is not None and result is not None:
                results.add(result)
        except RuntimeError as exc:
            # pyperf's master reports a worker that failed this way; the
            # worker printed its own error above.
            done = "; the %d completed benchmark(s) are in %s" % (
                index, results.path) if results is not None and index else ""
            fail("benchmark %s failed (%s)%s" % (bench.name, exc, done), status=1)


def enable_run_figures(args):
    """Per-run figures (metrics.py) are on by default, through pyperf's hook."""
    from pyperf._hooks import get_hook_names

    if metrics.HOOK_NAME not in (args.hook or []):
        if metrics.HOOK_NAME in set(get_hook_names()):
            args.hook = list(args.hook or []) + [metrics.HOOK_NAME]
        elif not args.worker:
            print("WARNING: the concbench pyperf hook is not installed (pip "
                  "install -e .), so runs carry no per-run figures",
                  file=sys.stderr)


if __name__ == "__main__":
    main()

"""http: one GET per item against the local load server (or an httpbin).

Each item asks for latency L (seeded, uniform in latency +- jitter) and a
response of S bytes. Client libraries, with fair defaults (``http_client``):

- ``requests+aiohttp``: requests for sync models (one Session per thread and
  per process), aiohttp for async models (one ClientSession per event loop);
- ``httpx``: httpx.Client and httpx.AsyncClient, the same library both ways,
  so that a reader can tell the model's effect from the library's.

Connection pools never cap concurrency below the model's: each thread owns a
session and uses one connection at a time; per-loop async clients have no
connection limit (the model's own limit, if any, caps the requests in
flight). Keep-alive is on by default; ``keepalive=off`` sends
``Connection: close`` so that every request opens a new connection.

Failures are counted, never fatal: timeouts, connection errors, statuses of
400 and above, and short bodies each count as one failed item. Every request
has a timeout.
"""

import functools
import importlib
import os
import random
import sys

from concbench import schema
from concbench.thresholds import SERVER_BUSY_LIMIT

from .base import (ITEMS, JITTER_MS, LATENCY_MS, PROCESS_POOL_DEFAULT, QUICK, RATE, SEED,
                   THREAD_POOL_DEFAULT, USABLE, CheckError, Option, Workload, ladder,
                   preset)
from .drivers.http_clients import AsyncFetcher, expected_size, fetch_sync
from .drivers.http_server import (SHARED_SERVER_ENV, check_server, detect_endpoint,
                                  read_server_stats, server_url)

CLIENTS = ("requests+aiohttp", "httpx")
ENDPOINTS = ("work", "httpbin")


# The default preset's sizes, and the wide preset's: its variants at the same sizes.
DEFAULT_SIZES = dict(items=200, latency_ms=10.0, size_bytes=1024)


class Http(Workload):
    name = "http"
    kind = "io"
    OPTIONS = (
        ITEMS.with_default(200), SEED, LATENCY_MS.with_default(20.0),
        JITTER_MS.with_default(0.0), RATE,
        Option("size_bytes", "--size-bytes", "size of each HTTP response, in bytes",
               int, 0, 100 * 1024 * 1024, default=1024),
        Option("http_client", "--http-client",
               "HTTP client libraries: requests for sync models and aiohttp "
               "for async ones, or httpx for both", choices=CLIENTS,
               default="requests+aiohttp"),
        Option("keepalive", "--keepalive",
               "reuse HTTP connections, or open one per request",
               choices=("on", "off"), default="on"),
        Option("timeout_s", "--http-timeout", "timeout of each HTTP request, in seconds "
               "(default: 10)",
               float, 0.001, 3600.0, default=10.0),
        Option("endpoint", "--http-endpoint",
               "the load server's /work, or httpbin's /delay and /bytes "
               "(default: what --server-url offers, found before the run)",
               choices=ENDPOINTS, default=""),
        Option("server_url", "--server-url",
               "run the http workload against this server (python -m "
               "concbench.servers on another machine, or an httpbin) instead "
               "of starting the local one", parse=server_url, metavar="URL",
               default=""),
    )
    REPORTED = (schema.ITEMS_PER_BATCH, "latency_ms", "jitter_ms", "rate", "size_bytes",
                "http_client", "keepalive", "seed")
    PRESETS = {
        "quick": preset(["sequential", "threads-8",
                         ladder("processes-{n}-chunk-1", QUICK, counts=(2,)),
                         "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", USABLE)],
                        items=60, latency_ms=5.0, size_bytes=1024),
        # Thread counts follow concurrency, not cores; process pools add
        # the machine's U and 2U usable CPUs (concbench.ladder) to 2.
        "default": preset(["sequential", "threads-8", "threads-32", "threads-100",
                           ladder("processes-{n}-chunk-1", QUICK, counts=(2,), room=2),
                           "processes-8-chunk-5",
                           "asyncio", "uvloop", ladder("hybrid-{n}", USABLE)],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-8", "threads-32", "threads-100",
                        "threads-32-reuse",
                        ladder("processes-{n}-chunk-1", QUICK, counts=(2,)),
                        "processes-8-chunk-5", THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                        "asyncio", "uvloop",
                        "asyncio-limit-32", "asyncio-serial", ladder("hybrid-{n}", QUICK)],
                       **DEFAULT_SIZES),
        # seeds/000: ~100-180 ms per request, 1-2 KB bodies.
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in (10, 100, 1000)]
                       + [ladder("processes-{n}-chunk-10", QUICK, counts=(2, 8, 32))]
                       + ["asyncio", "uvloop", "asyncio-limit-100",
                          "uvloop-limit-100", "asyncio-serial"]
                       + [ladder("hybrid-{n}", QUICK, counts=(10, 100, 1000))],
                       items=2000, latency_ms=140.0, jitter_ms=40.0, size_bytes=1500),
    }
    sockets_per_item = 1
    PROVIDED = ("server_url", "endpoint")

    def __init__(self, **params):
        super().__init__(**params)
        self.check_jitter()
        self.base = self.params["server_url"]
        # Without --http-endpoint, provide() finds out what the server offers.
        self.endpoint_given = bool(self.params["endpoint"])
        self.detected = None
        if not self.endpoint_given:
            self.params["endpoint"] = "work"

    def _client_args(self):
        p = self.params
        return (self.base, p["endpoint"], p["timeout_s"], p["keepalive"] == "on")

    def make_items(self):
        rnd = random.Random(self.params["seed"])
        return [(index, round(self.draw_latency_ms(rnd), 3), self.params["size_bytes"])
                for index in range(self.params["items"])]

    def _client(self, side):
        if self.params["http_client"] == "httpx":
            return "httpx"
        return "requests" if side == "sync" else "aiohttp"

    def open(self, model):
        """The model's client library is imported here, before the batches:
        imported by the first request, it would be on the first timed
        batch's clock alone (measured in ddfe756: git show ddfe756)."""
        importlib.import_module(self._client(model.item_side))

    def sync_function(self):
        client = self._client("sync")
        return functools.partial(fetch_sync, client=client,
                                 base=self._client_args()[0],
                                 endpoint=self.params["endpoint"],
                                 timeout=self.params["timeout_s"],
                                 keepalive=self.params["keepalive"] == "on")

    def async_function(self):
        return AsyncFetcher(self._client("async"), *self._client_args())

    def latencies(self, items):
        return [latency_ms / 1000.0 for _, latency_ms, _ in items]

    def reference(self, items):
        endpoint = self.params["endpoint"]
        return [(index, expected_size(endpoint, latency, size), "")
                for index, latency, size in items]

    def check(self, results, reference):
        """Lost or misplaced items are fatal; failed requests are counted."""
        results = self.check_count(results, reference)
        failures = {}
        bytes_in = 0
        for position, (got, want) in enumerate(zip(results, reference)):
            index, size, failure = got
            if index != want[0]:
                raise CheckError("item %d holds the result of item %r"
                                 % (position, index))
            bytes_in += size
            if failure:
                failures[failure] = failures.get(failure, 0) + 1
            elif want[1] is not None and size != want[1]:
                failures["short body"] = failures.get("short body", 0) + 1
        summary = {schema.ITEMS: len(results), schema.FAILURES: sum(failures.values()),
                   schema.BYTES_IN: bytes_in}
        for kind, count in failures.items():
            summary[schema.failures_key(kind)] = count
        return summary

    # -- the server (master) --------------------------------------------------
    def needs_providing(self):
        return not self.base or not self.endpoint_given

    def provide(self):
        """No --server-url: the local load server, stopped at exit. A
        --server-url without --http-endpoint: the endpoints it offers."""
        if self.base:
            endpoint = self.detected
            print("bench.py: --server-url %s offers %s; using --http-endpoint %s"
                  % (self.base, "this suite's /work" if endpoint == "work"
                     else "httpbin's /delay and /bytes", endpoint),
                  file=sys.stderr, flush=True)
            return {"endpoint": endpoint}
        shared = os.environ.get(SHARED_SERVER_ENV)
        if shared:
            # One server for several runs (make versions): each interpreter's
            # clients meet the same server, on the same Python.
            check_server(shared, SHARED_SERVER_ENV)
            print("bench.py: using the load server at %s (%s)"
                  % (shared, SHARED_SERVER_ENV), file=sys.stderr, flush=True)
            return {"server_url": shared, "endpoint": "work"}
        from concbench.run.cleanup import on_exit
        from concbench.servers.process import LocalServer

        server = LocalServer()
        on_exit(server.stop)    # before it starts: an interrupt may come at once
        url = server.start()
        return {"server_url": url, "endpoint": "work"}

    def preflight(self, in_flight):
        if self.base:
            check_server(self.base)
            if not self.endpoint_given:     # before anything is moved or run
                self.detected = detect_endpoint(self.base)

    # -- server figures, read before and after each batch (not timed) -------
    def before_batch(self):
        return read_server_stats(self.base)

    def after_batch(self, before, elapsed):
        if before is None:
            return {}
        after = read_server_stats(self.base)
        if after is None:
            return {}
        cpu = max(0.0, after["cpu_seconds"] - before["cpu_seconds"])
        return {schema.SERVER_CPU: cpu,
                schema.SERVER_REQUESTS: after["requests"] - before["requests"],
                schema.BYTES_OUT_SERVER: after["bytes_sent"] - before["bytes_sent"],
                # What the clients sent, as the server received it.
                schema.BYTES_OUT: (after.get("bytes_received", 0)
                              - before.get("bytes_received", 0))}

    def metadata(self):
        meta = super().metadata()
        meta[schema.HTTP_CLIENT_SYNC] = ("httpx" if self.params["http_client"] == "httpx"
                                    else "requests")
        meta[schema.HTTP_CLIENT_ASYNC] = ("httpx" if self.params["http_client"] == "httpx"
                                     else "aiohttp")
        meta[schema.POOLS] = ("one session per thread and process (sync); one client "
                         "per event loop without a connection limit (async)")
        meta[schema.SERVER_BUSY_LIMIT] = SERVER_BUSY_LIMIT
        meta[schema.HTTP_ENDPOINT] = self.params["endpoint"]
        if not meta["server_url"]:
            del meta["server_url"]
        # Which server answered, on which Python (this suite's server says).
        stats = read_server_stats(self.base) if self.base else None
        for key, stat in ((schema.HTTP_SERVER, "server"),
                          (schema.HTTP_SERVER_PYTHON, "python")):
            if stats and stats.get(stat):
                meta[key] = stats[stat]
        return meta

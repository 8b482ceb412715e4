"""The db workload's async side: psycopg's async API, asyncpg and aiomysql,
a connection per item or one per item in progress, opened as each event
loop starts."""

import asyncio

from .db_connect import (ASYNCPG_QUERY, CONNECT_TIMEOUT_S, MYSQL_QUERY, PG_QUERY, classify,
                         tls_context)


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

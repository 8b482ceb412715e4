"""The http workload's clients: requests or httpx for sync models (one
session per thread and per process), aiohttp or httpx for async models (one
client per event loop), each item's URL, and how a failed request is
counted."""

import asyncio
import os
import threading

_local = threading.local()


def item_url(base, endpoint, latency_ms, size):
    if endpoint == "httpbin":
        if latency_ms:
            return "%s/delay/%g" % (base, latency_ms / 1000.0)
        return "%s/bytes/%d" % (base, size)
    return "%s/work?latency_ms=%g&size=%d" % (base, latency_ms, size)


def expected_size(endpoint, latency_ms, size):
    """None where the body's size is not ours to choose (httpbin's /delay)."""
    if endpoint == "httpbin" and latency_ms:
        return None
    return size


def outcome(index, status, body_size, expected):
    if status >= 400:
        return (index, body_size, "status %d" % status)
    if expected is not None and body_size != expected:
        return (index, body_size, "short body")
    return (index, body_size, "")


def classify(exc):
    """Map a client library's exception to a failure kind."""
    name = type(exc).__name__
    text = str(exc)
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return "timeout"
    if ("ChunkedEncoding" in name or "Payload" in name or "IncompleteRead" in text
            or "complete message body" in text or "incomplete" in text.lower()):
        return "short body"
    return "connection"


# -- sync clients: one per thread and per process ----------------------------


def _thread_client(client, keepalive):
    key = (os.getpid(), client, keepalive)
    cached = getattr(_local, "clients", None)
    if cached is None or cached[0] != key:
        if client == "httpx":
            import httpx
            limits = httpx.Limits(max_connections=1,
                                  max_keepalive_connections=1 if keepalive else 0)
            session = httpx.Client(limits=limits)
        else:
            import requests
            session = requests.Session()
            adapter = requests.adapters.HTTPAdapter(pool_connections=1,
                                                    pool_maxsize=1, max_retries=0)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
        if not keepalive:
            session.headers["Connection"] = "close"
        _local.clients = cached = (key, session)
    return cached[1]


def fetch_sync(item, client, base, endpoint, timeout, keepalive):
    index, latency_ms, size = item
    url = item_url(base, endpoint, latency_ms, size)
    session = _thread_client(client, keepalive)
    try:
        response = session.get(url, timeout=timeout)
        body = response.content
        status = response.status_code
    except Exception as exc:    # counted, never fatal: see the module docstring
        return (index, 0, classify(exc))
    return outcome(index, status, len(body),
                   expected_size(endpoint, latency_ms, size))


# -- async clients: one per event loop ---------------------------------------


class AsyncFetcher:
    """The async item: a GET on the current loop's client session."""

    def __init__(self, client, base, endpoint, timeout, keepalive):
        self.client = client
        self.base = base
        self.endpoint = endpoint
        self.timeout = timeout
        self.keepalive = keepalive
        self._sessions = {}

    def _session(self):
        """The loop's client, created on first use with the request timeout,
        so that nothing per request is built on the timed path."""
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None:
            if self.client == "httpx":
                import httpx
                limits = httpx.Limits(
                    max_connections=None,
                    max_keepalive_connections=None if self.keepalive else 0)
                headers = {} if self.keepalive else {"Connection": "close"}
                session = httpx.AsyncClient(limits=limits, headers=headers,
                                            timeout=self.timeout)
            else:
                import aiohttp
                connector = aiohttp.TCPConnector(limit=0,
                                                 force_close=not self.keepalive)
                session = aiohttp.ClientSession(
                    connector=connector,
                    timeout=aiohttp.ClientTimeout(total=self.timeout))
            self._sessions[loop] = session
        return session

    async def __call__(self, item):
        index, latency_ms, size = item
        url = item_url(self.base, self.endpoint, latency_ms, size)
        session = self._session()
        try:
            if self.client == "httpx":
                response = await session.get(url)
                status, body = response.status_code, response.content
            else:
                async with session.get(url) as response:
                    status = response.status
                    body = await response.read()
        except Exception as exc:    # counted, never fatal
            return (index, 0, classify(exc))
        return outcome(index, status, len(body),
                       expected_size(self.endpoint, latency_ms, size))

    async def close_loop(self):
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            if self.client == "httpx":
                await session.aclose()
            else:
                await session.close()

"""The load server's application: what each endpoint answers, and its counts.

``LoadServer.respond`` knows the endpoints and counts what it serves; two
thin adapters serve it: ``app`` in this module, for granian's RSGI
interface (chosen for its lower CPU per request: docs/models.md, "The load
server"), and ``aiohttp_app``, for interpreters granian publishes no wheel
for (the free-threaded builds).

Fault injection for tests, read from the environment of the server process:
CONCBENCH_SERVER_FAIL_EVERY=N answers 500 to every N-th /work request;
CONCBENCH_SERVER_DROP_EVERY=N sends half of every N-th /work response, then
aborts the connection.
"""

import asyncio
import functools
import json
import os
import time
from urllib.parse import parse_qsl

MAX_SIZE = 100 * 1024 * 1024
MAX_DELAY = 60.0
OCTETS = [("content-type", "application/octet-stream")]
JSON = [("content-type", "application/json")]
TEXT = [("content-type", "text/plain")]


def payload(size):
    """Deterministic bytes, so a client can check what it received; those
    of a MiB or less made once (``small_payload``)."""
    if size <= 1 << 20:
        return small_payload(size)
    return pattern_of(size)


@functools.lru_cache(maxsize=64)
def small_payload(size):
    return pattern_of(size)


def pattern_of(size):
    pattern = b"0123456789abcdef"
    return (pattern * (size // len(pattern) + 1))[:size]


def head_size(method, target, version, headers):
    """Bytes of an HTTP/1.1 request head as sent (GET requests have no body):
    request line (``version`` without "HTTP/"), headers as (name, value)
    pairs, blank line."""
    size = len(method) + len(target) + len(version) + 9
    for name, value in headers:
        size += len(name) + len(value) + 4
    return size + 2


class Request:
    """What the application needs of a request, whichever server parsed it."""

    def __init__(self, path, query_string, headers, client, host, size):
        self.path, self.query_string = path, query_string
        self.headers, self.client, self.host, self.size = headers, client, host, size


class Reply:
    """What to answer: ``drop`` sends half the body, then aborts."""

    def __init__(self, status, headers, body, drop=False):
        self.status, self.headers, self.body, self.drop = status, headers, body, drop


class BadRequest(Exception):
    pass


def number(text, kind, low, high, what):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise BadRequest("%s must be a number" % what) from None
    if not low <= value <= high:
        raise BadRequest("%s must be in [%s, %s]" % (what, low, high))
    return value


class LoadServer:
    def __init__(self, fail_every=0, drop_every=0, software=""):
        self.fail_every = fail_every
        self.drop_every = drop_every
        self.software = software
        self.requests = 0
        self.work_requests = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        # /work requests being served now, and the most at once so far.
        self.in_flight = self.most_in_flight = 0

    async def respond(self, request):
        path = request.path
        if path == "/stats":
            # Not counted: reading the figures must not change them.
            return Reply(200, JSON, json.dumps(self.stats()).encode())
        self.bytes_received += request.size
        try:
            if path == "/work":
                reply = await self.work(request)
            elif path.startswith("/delay/"):
                await asyncio.sleep(number(path[len("/delay/"):], float, 0, MAX_DELAY,
                                           "delay"))
                reply = Reply(200, JSON, json.dumps(self.describe(request)).encode())
            elif path.startswith("/bytes/"):
                size = number(path[len("/bytes/"):], int, 0, MAX_SIZE, "n")
                reply = Reply(200, OCTETS, payload(size))
            elif path == "/get":
                reply = Reply(200, JSON, json.dumps(self.describe(request)).encode())
            else:
                reply = Reply(404, TEXT, b"not found\n")
        except BadRequest as exc:
            reply = Reply(400, TEXT, str(exc).encode() + b"\n")
        self.requests += 1
        self.bytes_sent += 0 if reply.drop else len(reply.body)
        return reply

    async def work(self, request):
        query = dict(parse_qsl(request.query_string))
        latency = number(query.get("latency_ms", "0"), float, 0, MAX_DELAY * 1000,
                         "latency_ms")
        size = number(query.get("size", "0"), int, 0, MAX_SIZE, "size")
        self.work_requests += 1
        count = self.work_requests
        if latency:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                await asyncio.sleep(latency / 1000.0)
            finally:
                self.in_flight -= 1
        if self.fail_every and count % self.fail_every == 0:
            return Reply(500, TEXT, b"injected failure\n")
        if self.drop_every and count % self.drop_every == 0:
            return Reply(200, OCTETS, payload(size), drop=True)
        return Reply(200, OCTETS, payload(size))

    def describe(self, request):
        host = request.headers.get("host", request.host)
        url = "http://%s%s" % (host, request.path)
        if request.query_string:
            url += "?" + request.query_string
        return {"args": dict(parse_qsl(request.query_string)),
                "headers": {k.title(): v for k, v in request.headers.items()},
                "origin": request.client.rsplit(":", 1)[0], "url": url}

    def stats(self):
        # process_time() is this process's CPU in every thread (granian's
        # Rust threads included) at nanosecond resolution; the supervising
        # main process, idle while serving, is read through psutil.
        seconds = time.process_time()
        main_pid = os.environ.get("CONCBENCH_SERVER_MAIN")
        if main_pid and main_pid != str(os.getpid()):
            try:
                import psutil
                main = psutil.Process(int(main_pid)).cpu_times()
                seconds += main.user + main.system
            except Exception:   # gone or unreadable: the worker's CPU only
                pass
        return {"requests": self.requests, "bytes_sent": self.bytes_sent,
                "bytes_received": self.bytes_received,
                "cpu_seconds": seconds, "pid": os.getpid(),
                "most_in_flight": self.most_in_flight,
                "server": self.software, "python": python_build()}


def python_build():
    """3.13.5, or 3.13.5t for a free-threaded build."""
    import platform
    import sysconfig
    return platform.python_version() + (
        "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")


def software(distribution, interface):
    import importlib.metadata
    return "%s %s (%s)" % (distribution, importlib.metadata.version(distribution),
                           interface)


def from_environment(name):
    """The load server, with the fault injection its environment asks for."""
    return LoadServer(
        fail_every=int(os.environ.get("CONCBENCH_SERVER_FAIL_EVERY", "0")),
        drop_every=int(os.environ.get("CONCBENCH_SERVER_DROP_EVERY", "0")),
        software=name)


class RsgiApp:
    """The RSGI adapter, for granian."""

    def __init__(self):
        self.server = None

    async def __rsgi__(self, scope, protocol):
        if self.server is None:
            self.server = from_environment(software("granian", "RSGI"))
        target = scope.path + ("?" + scope.query_string if scope.query_string else "")
        headers = dict(scope.headers.items())
        request = Request(scope.path, scope.query_string, headers, scope.client,
                          scope.server, head_size(scope.method, target,
                                                  scope.http_version,
                                                  scope.headers.items()))
        reply = await self.server.respond(request)
        if not reply.drop:
            protocol.response_bytes(reply.status, reply.headers, reply.body)
            return
        stream = protocol.response_stream(
            reply.status, reply.headers + [("content-length", str(len(reply.body)))])
        await stream.send_bytes(reply.body[:len(reply.body) // 2])
        raise ConnectionAbortedError("injected connection drop")


app = RsgiApp()

"""The RSGI application of the load server, served by granian.

granian was chosen by measured CPU per request (README, "The load server"):
on the same 4,000 requests at concurrency 100 from an aiohttp client,
aiohttp.web on uvloop used 115-155 us of CPU per request and granian's RSGI
interface 60-105 us.

Fault injection for tests, read from the environment of the server process:
CONCBENCH_SERVER_FAIL_EVERY=N answers 500 to every N-th /work request;
CONCBENCH_SERVER_DROP_EVERY=N sends half of every N-th /work response, then
aborts the connection.
"""

import asyncio
import json
import os
import time
from urllib.parse import parse_qsl

MAX_SIZE = 100 * 1024 * 1024
MAX_DELAY = 60.0
OCTETS = [("content-type", "application/octet-stream")]
JSON = [("content-type", "application/json")]
TEXT = [("content-type", "text/plain")]


def payload(size, _cache={}):
    """Deterministic bytes, so a client can check what it received."""
    body = _cache.get(size)
    if body is None:
        pattern = b"0123456789abcdef"
        body = (pattern * (size // len(pattern) + 1))[:size]
        if size <= 1 << 20:
            _cache[size] = body
    return body


def request_size(scope):
    """Bytes of an HTTP/1.1 request head as sent (GET requests have no body)."""
    target = scope.path + ("?" + scope.query_string if scope.query_string else "")
    size = len(scope.method) + len(target) + len(scope.http_version) + 9
    for name, value in scope.headers.items():
        size += len(name) + len(value) + 4
    return size + 2


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
    def __init__(self, fail_every=0, drop_every=0):
        self.fail_every = fail_every
        self.drop_every = drop_every
        self.requests = 0
        self.work_requests = 0
        self.bytes_sent = 0
        self.bytes_received = 0

    async def __rsgi__(self, scope, protocol):
        path = scope.path
        if path != "/stats":
            self.bytes_received += request_size(scope)
        try:
            if path == "/work":
                await self.work(scope, protocol)
            elif path.startswith("/delay/"):
                await self.delay(scope, protocol, path[len("/delay/"):])
            elif path.startswith("/bytes/"):
                size = number(path[len("/bytes/"):], int, 0, MAX_SIZE, "n")
                self.send(protocol, 200, OCTETS, payload(size))
            elif path == "/get":
                self.send_json(protocol, self.describe(scope))
            elif path == "/stats":
                # Not counted: reading the figures must not change them.
                protocol.response_bytes(200, JSON, json.dumps(self.stats()).encode())
            else:
                self.send(protocol, 404, TEXT, b"not found\n")
        except BadRequest as exc:
            self.send(protocol, 400, TEXT, str(exc).encode() + b"\n")

    def send(self, protocol, status, headers, body):
        self.requests += 1
        self.bytes_sent += len(body)
        protocol.response_bytes(status, headers, body)

    def send_json(self, protocol, data):
        self.send(protocol, 200, JSON, json.dumps(data).encode())

    async def work(self, scope, protocol):
        query = dict(parse_qsl(scope.query_string))
        latency = number(query.get("latency_ms", "0"), float, 0, MAX_DELAY * 1000,
                         "latency_ms")
        size = number(query.get("size", "0"), int, 0, MAX_SIZE, "size")
        self.work_requests += 1
        count = self.work_requests
        if latency:
            await asyncio.sleep(latency / 1000.0)
        if self.fail_every and count % self.fail_every == 0:
            self.send(protocol, 500, TEXT, b"injected failure\n")
        elif self.drop_every and count % self.drop_every == 0:
            self.requests += 1
            body = payload(size)
            stream = protocol.response_stream(
                200, OCTETS + [("content-length", str(len(body)))])
            await stream.send_bytes(body[:len(body) // 2])
            raise ConnectionAbortedError("injected connection drop")
        else:
            self.send(protocol, 200, OCTETS, payload(size))

    async def delay(self, scope, protocol, seconds):
        await asyncio.sleep(number(seconds, float, 0, MAX_DELAY, "delay"))
        self.send_json(protocol, self.describe(scope))

    def describe(self, scope):
        host = dict(scope.headers.items()).get("host", scope.server)
        url = "http://%s%s" % (host, scope.path)
        if scope.query_string:
            url += "?" + scope.query_string
        return {"args": dict(parse_qsl(scope.query_string)),
                "headers": {k.title(): v for k, v in scope.headers.items()},
                "origin": scope.client.rsplit(":", 1)[0], "url": url}

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
                "cpu_seconds": seconds, "pid": os.getpid()}


app = LoadServer(
    fail_every=int(os.environ.get("CONCBENCH_SERVER_FAIL_EVERY", "0")),
    drop_every=int(os.environ.get("CONCBENCH_SERVER_DROP_EVERY", "0")))

"""The load server on aiohttp.web: for interpreters without granian.

granian publishes no wheel for the free-threaded builds (none for cp313t
at 2.8.7), and aiohttp does. The same application (``app.LoadServer``)
answers; only the adapter differs, and the server records which one served
(``/stats``: ``server``), so a result says what it was measured against.
"""

from aiohttp import web

from .app import Request, from_environment, head_size, software


def make_app():
    server = from_environment(software("aiohttp", "aiohttp.web"))

    async def handle(request):
        target = request.path_qs
        version = "%d.%d" % request.version   # as granian gives it
        size = head_size(request.method, target, version,
                         [(k.decode(), v.decode()) for k, v in request.raw_headers])
        peer = request.transport.get_extra_info("peername") if request.transport else None
        client = "%s:%s" % peer[:2] if peer else ""
        reply = await server.respond(Request(
            request.path, request.query_string,
            {k.lower(): v for k, v in request.headers.items()}, client, request.host,
            size))
        headers = dict(reply.headers)
        if not reply.drop:
            return web.Response(status=reply.status, body=reply.body, headers=headers)
        headers["content-length"] = str(len(reply.body))
        response = web.StreamResponse(status=reply.status, headers=headers)
        await response.prepare(request)
        await response.write(reply.body[:len(reply.body) // 2])
        request.transport.close()   # the injected drop: half a body, then gone
        return response

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app

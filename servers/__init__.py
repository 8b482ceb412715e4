"""The HTTP load server: a separate process on loopback, cheap per request.

Built on aiohttp.web running on uvloop. Endpoints:

- ``/work?latency_ms=L&size=S``: waits L ms, answers S bytes (the http workload)
- ``/delay/{seconds}``, ``/bytes/{n}``, ``/get``: an httpbin-compatible subset,
  so the workload can target a real httpbin as well
- ``/stats``: requests served, bytes sent and the server's own CPU time

``python -m servers --host 0.0.0.0 --port 8080`` runs it on its own for a
two-machine set-up.
"""

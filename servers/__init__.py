"""The HTTP load server: a separate process on loopback, cheap per request.

An RSGI application (``app.py``) served by granian, one worker on a uvloop
event loop, chosen for its low CPU per request (docs/models.md, "The load server").
bench.py starts it as a child process (``process.py``) when the http
workload runs without ``--server-url``. Endpoints:

- ``/work?latency_ms=L&size=S``: waits L ms, answers S bytes (the http workload)
- ``/delay/{seconds}``, ``/bytes/{n}``, ``/get``: an httpbin-compatible subset,
  so the workload can target a real httpbin as well
- ``/stats``: requests served, bytes sent, the most ``/work`` requests held
  at once and the server's own CPU time

``python -m concbench.servers --host 0.0.0.0 --port 8080`` runs it on its
own for a two-machine set-up.
"""

import resource


def raise_nofile_limit():
    """Raise the soft limit on open files to the hard one; return the hard one.

    Thousands of concurrent connections need thousands of descriptors, on
    the client's side (bench.py) and on the server's.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return None if hard == resource.RLIM_INFINITY else hard

"""python -m concbench.servers [--host H] [--port P]: the load server alone.

Prints one line, ``listening on http://HOST:PORT``, once the server answers
(``--port 0`` picks a free port), then serves until SIGINT or SIGTERM, or,
with ``--exit-with PID``, until process PID is no longer its parent.
"""

import argparse
import os
import signal
import socket
import sys
import threading
import time
import urllib.request

from . import raise_nofile_limit


def free_port(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def announce_when_ready(url, timeout=30.0):
    """Print the URL once /stats answers, so a parent can wait for the line."""
    probe = url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(probe + "/stats", timeout=2):
                print("listening on %s" % url, flush=True)
                return
        except OSError:
            time.sleep(0.05)
    print("python -m concbench.servers: error: the server did not answer within %.0f s"
          % timeout, file=sys.stderr, flush=True)
    os._exit(1)


def exit_with(parent, interval=0.2, grace=0.5):
    """Exit once ``parent`` is gone (killed outright, it could not stop this
    server): within ``interval`` it notices, then it stops as on SIGTERM, and
    after ``grace`` its process group is killed."""
    while os.getppid() == parent:
        time.sleep(interval)
    try:
        print("python -m concbench.servers: process %d, which started this "
              "server, has ended: stopping" % parent, file=sys.stderr, flush=True)
    except (OSError, ValueError):   # its stderr may have gone with it
        pass
    leader = os.getpgid(0) == os.getpid()
    if leader:
        os.killpg(0, signal.SIGTERM)
    else:
        os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace)
    if leader:
        os.killpg(0, signal.SIGKILL)
    os._exit(1)


def main():
    parser = argparse.ArgumentParser(prog="python -m concbench.servers",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8080,
                        help="port, 0 for a free one (default: %(default)s)")
    parser.add_argument("--backlog", type=int, default=8192)
    # granian serves at most backlog / workers requests at once by default
    # (8,192 with this backlog and one worker) and stops accepting beyond:
    # the other connections wait for the kernel's queue and their clients'
    # retries, and a row of more concurrent requests would measure the
    # server's limit, not the model (measured in f8120c8: git show f8120c8).
    parser.add_argument("--backpressure", type=int, default=65536,
                        help="granian: the most requests served at once "
                        "(default: %(default)s)")
    parser.add_argument("--exit-with", type=int, metavar="PID",
                        help="exit when process PID is no longer this "
                        "server's parent (bench.py passes its own)")
    parser.add_argument("--server", choices=("auto", "granian", "aiohttp"),
                        default=os.environ.get("CONCBENCH_SERVER", "auto"),
                        help="granian (RSGI), aiohttp.web, or auto: granian "
                        "where it is installed (default: %(default)s)")
    args = parser.parse_args()
    if not 0 <= args.port <= 65535:
        parser.error("--port must be in [0, 65535]")
    raise_nofile_limit()
    if args.exit_with is not None:
        threading.Thread(target=exit_with, args=(args.exit_with,),
                         daemon=True).start()

    serve = serve_aiohttp if args.server == "aiohttp" or (
        args.server == "auto" and not granian_installed()) else serve_granian
    try:
        port = args.port or free_port(args.host)
        host = "[%s]" % args.host if ":" in args.host else args.host
        os.environ["CONCBENCH_SERVER_MAIN"] = str(os.getpid())
        threading.Thread(target=announce_when_ready,
                         args=("http://%s:%d" % (host, port),), daemon=True).start()
        serve(args, port)
    except OSError as exc:
        print("python -m concbench.servers: error: %s" % exc, file=sys.stderr)
        sys.exit(2)


def granian_installed():
    import importlib.util
    return importlib.util.find_spec("granian") is not None


def serve_granian(args, port):
    from granian.constants import HTTPModes, Interfaces, Loops, RuntimeModes
    from granian.log import LogLevels
    from granian.server import Server

    Server(__package__ + ".app:app", address=args.host, port=port,
           interface=Interfaces.RSGI, workers=1, runtime_mode=RuntimeModes.st,
           loop=Loops.uvloop, http=HTTPModes.http1, websockets=False,
           backlog=args.backlog, backpressure=args.backpressure,
           log_level=LogLevels.warning).serve()


def serve_aiohttp(args, port):
    """One process, one uvloop event loop, as granian's single worker."""
    from aiohttp import web

    from .aiohttp_app import make_app

    import uvloop
    uvloop.install()
    web.run_app(make_app(), host=args.host, port=port, backlog=args.backlog,
                print=None, access_log=None, handle_signals=True)


if __name__ == "__main__":
    main()

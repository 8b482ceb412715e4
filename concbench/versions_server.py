"""python -m concbench.versions_server COMMAND [ARG...]: one load server for a
whole command.

``make versions`` runs the suite under several interpreters. Were each run to
start its own load server, the http rows would compare servers (granian on
builds with the GIL, aiohttp.web where granian has no wheel), not clients.
This starts the server once, on the Python running this module, hands its
URL to every bench.py the command starts (CONCBENCH_SERVER_URL), and stops
it when the command ends, however it ends. Its exit status is the command's.
"""

import os
import signal
import subprocess
import sys

from concbench.servers.process import LocalServer
from concbench.workloads.drivers.http_server import SHARED_SERVER_ENV

PROG = "python -m concbench.versions_server"


def main(argv):
    if not argv or argv[0].startswith("-"):
        print("usage: %s COMMAND [ARG...]" % PROG, file=sys.stderr)
        return 2
    server = LocalServer()
    child = None
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN

    def forward(signum, frame):
        if child is None:       # no command yet: stop here
            sys.exit(128 + signum)
        if child.poll() is None:
            child.send_signal(signum)
    try:
        # SIGTERM and SIGHUP go to the command; the server is stopped after it.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, forward)
        try:
            url = server.start()
        except RuntimeError as exc:
            print("%s: error: %s" % (PROG, exc), file=sys.stderr)
            return 1
        # A Ctrl-C reaches the whole process group: the command decides what
        # it means, and this process waits for it, then stops the server.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("%s: the load server of every run: %s" % (PROG, url),
              file=sys.stderr, flush=True)
        env = dict(os.environ, **{SHARED_SERVER_ENV: url})
        try:
            child = subprocess.Popen(argv, env=env, preexec_fn=lambda: signal.signal(
                signal.SIGINT, signal.SIG_IGN if ignored else signal.SIG_DFL))
        except OSError as exc:
            print("%s: error: cannot run %s: %s" % (PROG, argv[0], exc.strerror),
                  file=sys.stderr)
            return 2
        return child.wait()
    except KeyboardInterrupt:   # while the server was starting
        return 128 + signal.SIGINT
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

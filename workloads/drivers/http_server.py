"""The server the http workload loads: its URL checked, its endpoints found
(the load server's /work or an httpbin's), and its own figures read after a
batch (/stats)."""

import json
import urllib.error
import urllib.parse
import urllib.request


def read_server_stats(base, timeout=5.0):
    """The load server's counters, or None for a server without /stats."""
    try:
        with urllib.request.urlopen(base + "/stats", timeout=timeout) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def server_url(text):
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("%r is not an http:// or https:// URL with a host" % text)
    return text.rstrip("/")


def detect_endpoint(url):
    """'work' if the server is this suite's (its /stats, which counts
    nothing), 'httpbin' if it answers httpbin's /bytes, else ValueError in
    one line."""
    stats = read_server_stats(url)
    if isinstance(stats, dict) and "requests" in stats:
        return "work"
    try:
        with urllib.request.urlopen(url + "/bytes/1", timeout=5) as response:
            if response.status == 200 and len(response.read()) == 1:
                return "httpbin"
    except (OSError, ValueError):
        pass
    raise ValueError("--server-url %s offers neither this suite's /work nor "
                     "httpbin's /bytes/N; point it at python -m concbench.servers "
                     "or an httpbin" % url)


# Set by python -m concbench.versions_server: the load server every bench.py
# it starts uses instead of starting its own (when --server-url is not given).
SHARED_SERVER_ENV = "CONCBENCH_SERVER_URL"


def check_server(url, given_as="--server-url"):
    """One line if the server does not answer at all (any status will do)."""
    try:
        with urllib.request.urlopen(url + "/get", timeout=5):
            pass
    except urllib.error.HTTPError:
        pass    # it answers; the workload counts what it answers
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ValueError("%s %s does not answer: %s" % (given_as, url, reason)) from None

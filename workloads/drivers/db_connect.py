"""How the db workload reaches its server: the engines and drivers it
knows, --db-url parsed into each driver's arguments (a TCP host, or a
PostgreSQL Unix socket's folder), TLS when asked for, and how a failed
query is counted."""

import urllib.parse

ENGINES = {"postgresql": "postgresql", "postgres": "postgresql",
           "mysql": "mysql", "mariadb": "mysql"}


DRIVERS = {"psycopg": ("postgresql", "psycopg", "psycopg"),
           "psycopg+asyncpg": ("postgresql", "psycopg", "asyncpg"),
           "pymysql+aiomysql": ("mysql", "pymysql", "aiomysql")}


DEFAULT_DRIVER = {"postgresql": "psycopg", "mysql": "pymysql+aiomysql"}


DEFAULT_PORT = {"postgresql": 5432, "mysql": 3306}


DISTRIBUTIONS = {"psycopg": "psycopg", "asyncpg": "asyncpg",
                 "pymysql": "PyMySQL", "aiomysql": "aiomysql"}


CONNECT_TIMEOUT_S = 10


PG_QUERY = "SELECT %s::bigint FROM pg_sleep(%s)"


ASYNCPG_QUERY = "SELECT $1::bigint FROM pg_sleep($2)"


MYSQL_QUERY = "SELECT SLEEP(%s), %s"


class DatabaseError(Exception):
    """The server cannot be used: one line, said before any benchmark runs."""


def checked_url(url):
    """--db-url's type: the URL, or ValueError if it does not parse."""
    parse_url(url)
    return url


def parse_url(url):
    """(engine, connection arguments) from postgresql:// or mysql:// URLs."""
    parts = urllib.parse.urlsplit(url)
    shown = safe_url(url)
    engine = ENGINES.get(parts.scheme.split("+")[0])
    query = urllib.parse.parse_qs(parts.query)
    # libpq's form for a server on a Unix socket: the socket's folder as
    # ?host=/path (an embedded server such as pgserver listens only there).
    socket_dir = query.pop("host", [None])[-1] if engine == "postgresql" else None
    if socket_dir is not None and not socket_dir.startswith("/"):
        raise ValueError("%r: host= must be the absolute path of the server's "
                         "socket folder" % shown)
    if engine is None or not (parts.hostname or socket_dir):
        raise ValueError("%r is not a postgresql:// or mysql:// URL with a host"
                         % shown)
    try:
        port = parts.port or DEFAULT_PORT[engine]
    except ValueError:
        raise ValueError("%r has an invalid port" % shown) from None
    unknown = set(query) - {"sslmode"}
    if unknown:
        raise ValueError("%r: unknown parameter(s) %s; only sslmode=disable|require "
                         "(and host=/socket/folder for postgresql) is understood"
                         % (shown, ", ".join(sorted(unknown))))
    sslmode = query.get("sslmode", ["disable"])[-1]
    if sslmode not in ("disable", "require"):
        raise ValueError("%r: sslmode must be disable or require" % shown)
    if socket_dir and sslmode == "require":
        raise ValueError("%r: sslmode=require needs a TCP host, not a socket" % shown)
    unquote = urllib.parse.unquote
    return engine, {
        "host": socket_dir or parts.hostname, "port": port,
        "user": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "database": unquote(parts.path.lstrip("/")) or None,
        "tls": sslmode == "require"}


# The one TLS context of this process: loading the CA store is paid once.
_tls_context = None


def tls_context():
    """One unverified client context per process: TLS for its cost, on a
    server of the user's own; building one per connection would load the CA
    store every time, a cost no driver should be charged (measured in
    0527442: git show 0527442)."""
    global _tls_context
    if _tls_context is None:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        _tls_context = context
    return _tls_context


def safe_url(url):
    """The URL without its password, for metadata and messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def classify(exc):
    name = type(exc).__name__
    text = str(exc).lower()
    if (isinstance(exc, TimeoutError) or "timeout" in name.lower()
            or "statement timeout" in text or "timed out" in text
            or "querycanceled" in name.lower()):
        return "timeout"
    return "query"


# -- sync side: psycopg and PyMySQL ------------------------------------------

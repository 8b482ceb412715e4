"""The load server and the http workload under every model."""

import asyncio
import json
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest

from concbench import models
from concbench import workloads
from conftest import BENCH, TINY_RUNNER, default_sigint, need_open_files, run_bench
from concbench.servers.process import LocalServer
from test_workloads_models import imported_by_a_first_batch


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read()


def server_processes(since):
    """Load servers started after ``since`` by this process's tests that are
    still running, but for those of the test fixtures (module-scoped, they
    may start just before). A server whose bench.py ended is this
    process's (tests/conftest.py adopts orphans); other processes' tests,
    running beside these, have servers of their own."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmdline, created = proc.cmdline(), proc.create_time()
        except psutil.Error:
            continue
        if ("concbench.servers" in cmdline and "-m" in cmdline
                and created >= since - 1 and proc.pid not in FIXTURE_SERVERS):
            found.append(proc)
    return found


# Processes of the servers the fixtures below started.
FIXTURE_SERVERS = set()


@pytest.fixture(scope="module")
def server():
    local = LocalServer()
    url = local.start()
    processes = local.descendants()
    FIXTURE_SERVERS.update(p.pid for p in processes)
    assert processes, "the server has no process"
    yield url
    local.stop()
    gone, alive = psutil.wait_procs(processes, timeout=5)
    assert not alive, "server processes left behind: %s" % alive


def stats(url):
    return json.loads(get(url + "/stats")[1])


def test_server_honours_latency_and_size(server):
    """A request asking for 50 ms takes at least 50 ms, and less than a
    request asking for none plus 75 ms: the server waits what it is asked,
    not twice that (measured against this run's own zero-latency requests,
    so a busy machine's delays, which both pay, leave the check alone;
    medians of 7, so one request stalled by a throttled CPU does not)."""
    medians = {}
    for latency_ms in (0, 50):
        elapsed = []
        for _ in range(7):
            start = time.perf_counter()
            status, body = get("%s/work?latency_ms=%d&size=10" % (server, latency_ms))
            elapsed.append((time.perf_counter() - start) * 1000)
            assert status == 200 and body == b"0123456789"
        assert min(elapsed) >= latency_ms, elapsed
        medians[latency_ms] = statistics.median(elapsed)
    assert medians[50] < medians[0] + 75, medians
    for size in (0, 1, 1024, 1 << 20):
        status, body = get("%s/work?size=%d" % (server, size))
        assert len(body) == size


def test_httpbin_subset(server):
    status, body = get(server + "/bytes/100")
    assert status == 200 and len(body) == 100
    start = time.perf_counter()
    status, body = get(server + "/delay/0.1?x=1")
    assert time.perf_counter() - start >= 0.1
    assert json.loads(body)["args"] == {"x": "1"}
    status, body = get(server + "/get?a=b")
    data = json.loads(body)
    assert data["args"] == {"a": "b"} and data["url"].endswith("/get?a=b")
    with pytest.raises(urllib.error.HTTPError) as info:
        get(server + "/work?size=-1")
    assert info.value.code == 400


def test_stats_count_requests_bytes_and_cpu(server):
    before = stats(server)
    for _ in range(20):
        get(server + "/work?size=100")
    after = stats(server)
    assert after["requests"] - before["requests"] == 20
    assert after["bytes_sent"] - before["bytes_sent"] == 2000
    assert after["cpu_seconds"] > before["cpu_seconds"]


def test_server_serves_5000_concurrent_connections(server):
    """5,000 requests sent at once, each held 5 s by the server (opening
    them takes about 2.5 s here): all 5,000 are held at the same moment
    (the server's own count of /work requests waiting), so none waited for
    another's connection to close."""
    import aiohttp

    need_open_files(5000)

    async def main():
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            async def one():
                async with session.get(server + "/work?latency_ms=5000&size=10") as r:
                    return r.status, len(await r.read())
            return await asyncio.gather(*(one() for _ in range(5000)))

    before = stats(server)
    assert before["most_in_flight"] < 5000
    results = asyncio.run(main())
    assert results == [(200, 10)] * 5000
    after = stats(server)
    assert after["requests"] - before["requests"] == 5000
    assert after["most_in_flight"] == 5000, after


HTTP_MODELS = ["sequential", "threads-4", "threads-3-reuse", "processes-2-chunk-2",
               "processes-2-chunk-1-reuse", "asyncio", "uvloop", "asyncio-limit-3",
               "asyncio-serial", "hybrid-2", "hybrid-3-uvloop"]


def run_http(model_name, **params):
    workload = workloads.get("http")(**params)
    items = workload.make_items()
    model = models.parse(model_name)
    model.open()
    try:
        results = model.run(workload.sync_function(), workload.async_function(), items)
    finally:
        model.close()
    return workload.check(results, workload.reference(items))


@pytest.mark.parametrize("client", ["requests+aiohttp", "httpx"])
@pytest.mark.parametrize("model_name", HTTP_MODELS)
def test_every_model_gets_every_byte(server, model_name, client):
    summary = run_http(model_name, items=12, latency_ms=2.0, size_bytes=3000,
                       server_url=server, http_client=client)
    assert summary == {"items": 12, "failures": 0, "bytes_in": 36000}


@pytest.mark.parametrize("model_name", ["sequential", "threads-3", "asyncio"])
def test_keepalive_off_opens_a_connection_per_request(server, model_name):
    summary = run_http(model_name, items=9, latency_ms=1.0, size_bytes=10,
                       server_url=server, keepalive="off")
    assert summary["failures"] == 0 and summary["bytes_in"] == 90


@pytest.mark.parametrize("client", ["requests+aiohttp", "httpx"])
@pytest.mark.parametrize("model_name", ["sequential", "threads-2", "asyncio", "hybrid-2"])
def test_a_first_batch_imports_no_client_library(server, client, model_name):
    """The model's client library is imported before the batches: on the
    first batch's clock aiohttp's import made it 5 times as long as the
    next ones (0.1 s against 19 ms)."""
    found = imported_by_a_first_batch("http", model_name, {
        "server_url": server, "endpoint": "work", "http_client": client,
        "items": 4, "latency_ms": 0.0})
    assert found == {"modules": [], "processes": []}


@pytest.fixture(scope="module", params=["granian", "aiohttp"])
def faulty_server(request):
    """The load server on granian, and on aiohttp.web (where granian has no
    wheel): the same answers, the same counts."""
    local = LocalServer(env={"CONCBENCH_SERVER_FAIL_EVERY": "5",
                             "CONCBENCH_SERVER_DROP_EVERY": "7",
                             "CONCBENCH_SERVER": request.param})
    url = local.start()
    FIXTURE_SERVERS.update(p.pid for p in local.descendants())
    assert stats(url)["server"].startswith(request.param + " ")
    yield url
    local.stop()


def expected_faults(first, count):
    """The server fails request k (counted from 1) if k % 5 == 0 (500) or
    else if k % 7 == 0 (connection dropped halfway through the body)."""
    numbers = range(first + 1, first + count + 1)
    status = sum(1 for k in numbers if k % 5 == 0)
    dropped = sum(1 for k in numbers if k % 5 and k % 7 == 0)
    return status, dropped


@pytest.mark.parametrize("client", ["requests+aiohttp", "httpx"])
@pytest.mark.parametrize("model_name", ["sequential", "threads-4", "asyncio",
                                        "hybrid-2", "processes-2-chunk-3"])
def test_failures_are_counted_exactly(faulty_server, model_name, client):
    first = stats(faulty_server)["requests"]
    summary = run_http(model_name, items=40, latency_ms=1.0, size_bytes=2000,
                       server_url=faulty_server, http_client=client)
    status, dropped = expected_faults(first, 40)
    assert summary["items"] == 40
    assert summary["failures"] == status + dropped
    assert summary["failures_status_500"] == status
    assert summary.get("failures_short_body", 0) == dropped


def test_unreachable_server_url_fails_before_any_benchmark(tmp_path):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = run_bench(["--workload", "http", "--server-url",
                      "http://127.0.0.1:%d" % port, "-o", "x.json"], tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not answer" in lines[0], proc.stderr
    assert "[1/" not in proc.stderr and not (tmp_path / "x.json").exists()


def test_bad_server_url_is_refused(tmp_path):
    proc = run_bench(["--workload", "http", "--server-url", "localhost:80"], tmp_path)
    assert proc.returncode == 2
    assert "is not an http:// or https:// URL" in proc.stderr


HTTP_TINY = ["--preset", "quick", "--workload", "http", "--items", "8",
             "--latency-ms", "2", "--no-control"]


def test_bench_writes_http_figures_and_stops_its_server(tmp_path):
    since = time.time()
    proc = run_bench(HTTP_TINY + ["--model", "sequential,asyncio,threads-2"]
                     + TINY_RUNNER + ["-o", "h.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    import pyperf
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "h.json"))
    for bench in suite.get_benchmarks():
        for run in bench.get_runs():
            meta = run.get_metadata()
            assert meta["items"] == 8 and meta["failures"] == 0
            assert meta["bytes_in"] == 8 * 1024
            assert meta["server_requests"] == 8
            assert meta["server_cpu"] > 0
            # The server's CPU over the timed batches' wall time, rounded
            # as the file keeps it.
            assert meta["server_busy"] == pytest.approx(
                meta["server_cpu"] / sum(run.values), rel=1e-3, abs=1e-5), meta
    time.sleep(0.5)
    assert server_processes(since) == []


def test_one_shared_server_serves_every_run_of_a_command(tmp_path):
    """make versions: one load server for every interpreter's runs."""
    since = time.time()
    runs = " && ".join(
        "%s %s %s -o %s.json" % (sys.executable, BENCH, " ".join(
            HTTP_TINY + ["--model", "sequential,asyncio"] + TINY_RUNNER), name)
        for name in ("a", "b"))
    proc = subprocess.run([sys.executable, "-m", "concbench.versions_server",
                           "sh", "-c", runs], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import pyperf
    seen = set()
    for name in ("a", "b"):
        for bench in pyperf.BenchmarkSuite.load(str(tmp_path / (name + ".json"))) \
                .get_benchmarks():
            meta = bench.get_metadata()
            seen.add((meta["server_url"], meta["http_server"],
                      meta["http_server_python"]))
            assert all(run.get_metadata()["server_requests"] == 8
                       for run in bench.get_runs())
    assert len(seen) == 1, seen
    assert proc.stderr.count("bench.py: using the load server at %s "
                             "(CONCBENCH_SERVER_URL)" % seen.pop()[0]) == 2
    time.sleep(0.5)
    assert server_processes(since) == []
    # Its exit status is the command's; no command is a usage error.
    failed = subprocess.run([sys.executable, "-m", "concbench.versions_server",
                             "sh", "-c", "exit 3"], capture_output=True, timeout=60)
    assert failed.returncode == 3
    usage = subprocess.run([sys.executable, "-m", "concbench.versions_server"],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: ")


def test_external_faulty_server_failures_reach_the_json(tmp_path, faulty_server):
    first = stats(faulty_server)["requests"]
    proc = run_bench(HTTP_TINY + ["--items", "40", "--model", "sequential",
                                  "--server-url", faulty_server]
                     + TINY_RUNNER + ["-o", "f.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    import pyperf
    run = pyperf.Benchmark.load(str(tmp_path / "f.json")).get_runs()[0]
    # The worker sent one request before its batch (Model.prime), untimed.
    status, dropped = expected_faults(first + 1, 40)
    assert run.get_metadata()["failures"] == status + dropped


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_bench_leaves_no_server(tmp_path, signum):
    since = time.time()
    proc = subprocess.Popen([sys.executable, BENCH] + HTTP_TINY
                            + ["--items", "200", "--latency-ms", "20",
                               "--model", "sequential", "-p", "3", "-o", "i.json"],
                            cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.time() + 30
    while time.time() < deadline and not server_processes(since):
        time.sleep(0.1)
    assert server_processes(since), "the server never started"
    time.sleep(1.0)
    proc.send_signal(signum)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    deadline = time.time() + 5
    while time.time() < deadline and server_processes(since):
        time.sleep(0.1)
    assert server_processes(since) == []


def test_pyperf_timeout_leaves_no_server(tmp_path):
    since = time.time()
    proc = run_bench(HTTP_TINY + ["--items", "100", "--latency-ms", "50",
                                  "--model", "sequential", "--timeout", "2",
                                  "-p", "1", "-o", "t.json"], tmp_path)
    # Stopped by the timeout (pyperf's status, as timeout(1)'s), said in one line.
    assert proc.returncode == 124, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "bench.py: error: benchmark http/sequential: its worker ran longer than "
        "--timeout 2 s and was stopped"), proc.stderr
    time.sleep(0.5)
    assert server_processes(since) == []


def test_too_low_descriptor_limit_is_reported_before_starting(tmp_path):
    import resource

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = subprocess.run([sys.executable, BENCH, "--workload", "http", "--items",
                           "1000", "--model", "asyncio", "-o", "x.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          preexec_fn=low_limit)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "bench.py: error: http/asyncio keeps up to 1000 connections open, but the "
        "hard limit on open files is 256; raise it (ulimit -Hn, or limits.conf) "
        "or lower the concurrency")


def test_aiohttp_server_serves_a_verified_run_and_is_recorded(tmp_path):
    """Without granian (free-threaded builds) the load server runs on
    aiohttp.web, and the results say which server served them."""
    import os

    env = dict(os.environ, CONCBENCH_SERVER="aiohttp")
    proc = subprocess.run([sys.executable, BENCH] + HTTP_TINY
                          + ["--model", "sequential,asyncio", "--items", "20"]
                          + TINY_RUNNER + ["-o", "a.json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    import pyperf
    for bench in pyperf.BenchmarkSuite.load(str(tmp_path / "a.json")).get_benchmarks():
        meta = bench.get_metadata()
        assert meta["http_server"].startswith("aiohttp ")
        assert meta["http_server_python"].split(".")[0] == "3"
        for run in bench.get_runs():
            figures = run.get_metadata()
            assert figures["failures"] == 0 and figures["server_requests"] == 20
            assert figures["bytes_out"] > 0


FAKE_HTTPBIN = '''
import asyncio, sys
from aiohttp import web

async def delay(request):
    await asyncio.sleep(float(request.match_info["s"]))
    return web.json_response({"url": str(request.url)})

async def nbytes(request):
    return web.Response(body=b"x" * int(request.match_info["n"]))

app = web.Application()
if sys.argv[2] == "httpbin":
    app.router.add_get("/delay/{s}", delay)
    app.router.add_get("/bytes/{n}", nbytes)
    app.router.add_get("/get", lambda r: web.json_response({}))
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
'''


@pytest.fixture
def other_server(tmp_path):
    """An httpbin stand-in (its /delay, /bytes and /get only), or a server
    that answers 404 to everything, on a free loopback port."""
    started = []

    def start(kind):
        import socket
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        script = tmp_path / "fake.py"
        script.write_text(FAKE_HTTPBIN)
        proc = subprocess.Popen([sys.executable, str(script), str(port), kind])
        started.append(proc)
        url = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url + "/", timeout=1)
            except urllib.error.HTTPError:
                return url
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the stand-in server did not start")
    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)


def test_server_url_endpoints_are_found(other_server, tmp_path):
    url = other_server("httpbin")
    proc = run_bench(HTTP_TINY + ["--model", "sequential,asyncio", "--server-url",
                                  url, "--latency-ms", "0"] + TINY_RUNNER
                     + ["-o", "b.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("bench.py: --server-url %s offers httpbin's /delay and /bytes; using "
            "--http-endpoint httpbin" % url) in proc.stderr
    import pyperf
    for bench in pyperf.BenchmarkSuite.load(str(tmp_path / "b.json")).get_benchmarks():
        assert bench.get_metadata()["http_endpoint"] == "httpbin"
        assert all(r.get_metadata()["failures"] == 0 for r in bench.get_runs())


def test_server_url_offering_neither_is_one_line(other_server, tmp_path):
    url = other_server("nothing")
    proc = run_bench(HTTP_TINY + ["--model", "sequential", "--server-url", url]
                     + TINY_RUNNER + ["-o", "n.json"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "bench.py: error: --server-url %s offers neither this suite's /work nor "
        "httpbin's /bytes/N; point it at python -m concbench.servers or an "
        "httpbin" % url]
    assert not (tmp_path / "n.json").exists()

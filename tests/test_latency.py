"""Each item's latency in every batch: the histogram's error, what a real run
records per model, the report's columns, chart and sort, open-loop runs at
a given arrival rate and their sweep, and bad --rate values."""

import csv
import io
import json
import math
import random
import re
import statistics
import sys

import pyperf
import pytest

from concbench.histogram import RATIO, Histogram, histogram_of
from conftest import ROOT, run, run_bench

REPORT = str(ROOT / "report.py")


def document(folder, name, *args):
    proc = run([REPORT, name, "--format", "json"] + list(args), folder)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def rows_of(doc):
    return {row["benchmark"]: row for entry in doc["workloads"].values()
            for row in entry["rows"]}


@pytest.mark.quick
def test_the_histogram_keeps_every_percentile_within_its_error():
    rnd = random.Random(7)
    values = [rnd.lognormvariate(math.log(0.02), 0.8) for _ in range(20000)]
    found = histogram_of(values)
    ordered = sorted(values)
    for share in (1, 50, 90, 99, 99.9):
        exact = ordered[max(0, math.ceil(share / 100 * len(values)) - 1)]
        assert found.percentile(share) == pytest.approx(exact, rel=(RATIO - 1) / 2 + 1e-9)
    assert found.percentile(100) == max(values) and found.total == len(values)
    # What a run's metadata keeps, merged over runs.
    again = Histogram.decode(found.encode())
    assert again.counts == found.counts and again.largest == found.largest
    assert again.merge(found).total == 2 * len(values)
    assert len(found.encode()) < 12 * len(found.counts) + 20


@pytest.fixture(scope="module")
def closed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("closed")
    proc = run_bench(["--workload", "sleep,encode", "--model",
                      "sequential,asyncio,threads-4,processes-2-chunk-50",
                      "--items", "200", "--latency-ms", "2", "--jitter-ms", "1",
                      "-p", "2", "-n", "2", "-w", "1", "--no-control", "-o", "c.json"],
                     folder)
    assert proc.returncode == 0, proc.stderr
    return folder


def test_every_model_records_every_item(closed):
    suite = pyperf.BenchmarkSuite.load(str(closed / "c.json"))
    for bench in suite.get_benchmarks():
        from_ = bench.get_metadata()["latency_from"]
        model = bench.get_metadata()["model"]
        assert from_ == ("item" if model == "sequential" else "batch"), bench.get_name()
        for run_ in bench.get_runs():
            meta = run_.get_metadata()
            histogram = Histogram.decode(meta["latency_hist"])
            assert meta["items"] == 2 * 200
            every = meta.get("latency_every")
            if every is None:
                # One latency per item of every value's batch, none lost.
                assert histogram.total == meta["items"]
            else:
                # encode's items under a thread pool's one-item tasks are
                # too cheap to time each: one in ``every``, at random.
                assert model == "threads-4" and every > 1, bench.get_name()
                expected = meta["items"] / every
                assert 0.4 * expected < histogram.total < 1.6 * expected
    doc = document(closed, "c.json")
    rows = rows_of(doc)
    sleep = rows["sleep/sequential"]
    # Each item waits its own sleep, 2 +- 1 ms, and what sleeping and a
    # busy machine's scheduling add, far from the 400 ms a batch of 200
    # takes: latencies timed from the batch's start would be half the
    # batch at the median and all of it at p99. Bounded by this run's own
    # batch, which a busy machine stretches as it stretches the items.
    assert 1.6e-3 < sleep["latency_p50_s"] < sleep["mean_s"] / 20, sleep
    assert sleep["latency_p99_s"] < sleep["mean_s"] / 4, sleep
    assert sleep["latency_items"] == 4 * 200
    # Handed every item at once, the thread pool's items queue for 4
    # threads: their latency runs from the batch's start, up to its end.
    # Up to the end of its own batch, not past the longest one (the mean's
    # 1.5 was broken under a 1-CPU quota: 211 ms against batches of 139 ms
    # on the mean, the quota's throttle falling on one batch).
    pooled = rows["sleep/threads-4"]
    assert pooled["latency_max_s"] > 20 * sleep["latency_p50_s"]
    longest = max(suite.get_benchmark("sleep/threads-4").get_values())
    assert pooled["latency_max_s"] <= longest * 1.02 + 1e-3, (pooled, longest)
    # A chunk's items reach the caller together: the pool's median item
    # waits at least a chunk's worth of sequential items (50 here).
    chunked = rows["encode/processes-2-chunk-50"]
    item = rows["encode/sequential"]["latency_p50_s"]
    assert chunked["latency_p50_s"] > 50 * item * 0.5, (chunked, item)
    for row in rows.values():
        assert row["latency_p50_s"] <= row["latency_p90_s"] <= row["latency_p99_s"] \
            <= row["latency_max_s"]
        assert [share for share, _ in row["latency_curve"]] == [50, 75, 90, 95, 99,
                                                                 99.9, 100]


def test_the_report_shows_sorts_and_charts_latency(closed):
    # The default table's p99, and p50 with it among the columns to choose.
    assert " p99 " in run([REPORT, "c.json"], closed).stdout
    text = run([REPORT, "c.json", "--sort", "latency", "--columns",
                "benchmark,latency_p50_s"], closed).stdout
    assert "latency p50/p99" in text
    sleep = [line.split()[0] for line in text.splitlines() if line.startswith("sleep/")]
    rows = rows_of(document(closed, "c.json"))
    assert len(sleep) > 2 and sleep == sorted(sleep, key=lambda n: rows[n]["latency_p99_s"])
    table = list(csv.DictReader(io.StringIO(
        run([REPORT, "c.json", "--format", "csv"], closed).stdout)))
    assert {"latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_max_s",
            "latency_items"} <= set(table[0])
    page = closed / "c.html"
    proc = run([REPORT, "c.json", "--html", str(page)], closed)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert "each item&#x27;s wait for its result" in html.lower() or \
        "each item's wait for its result" in html.lower()
    assert "<th>p90</th>" in html and "<th>max latency</th>" in html


def test_open_loop_at_a_rate_below_and_above_capacity(tmp_path):
    """20 items of 10 ms at 25/s: asyncio keeps up and each item waits its
    own 10 ms from its arrival; sequential can serve 100/s and keeps up too
    (a rate 4 times below what it serves, so that a busy machine's pauses
    do not make it fall behind); at 400/s, 4 times above, sequential falls
    behind and is flagged overloaded, and asyncio, whose sleeps overlap,
    keeps up: 200 items there, half a second of schedule, so that a
    throttled CPU's pauses of tens of milliseconds fall on the first and
    the last quarters alike and do not read as lateness that grows."""
    proc = run_bench(["--workload", "sleep", "--model", "sequential,asyncio",
                      "--items", "20", "--latency-ms", "10", "--jitter-ms", "0",
                      "--rate", "25/s", "-p", "1", "-n", "1", "-w", "1",
                      "--no-control", "-o", "r.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(document(tmp_path, "r.json"))
    assert set(rows) == {"sleep@25/s/sequential", "sleep@25/s/asyncio"}
    for row in rows.values():
        assert "overloaded" not in row["flags"]
        # Its own 10 ms, not a queue's multiples of it nor the time since
        # the batch began (half the batch at the median).
        assert 9e-3 < row["latency_p50_s"] < row["mean_s"] / 4, row
        # The batch lasts as long as the schedule: 20 items at 25/s, the
        # last due at 0.76 s.
        assert 0.77 - 0.01 < row["mean_s"] < 0.77 + 0.2
    proc = run_bench(["--workload", "sleep", "--model", "sequential,asyncio",
                      "--items", "200", "--latency-ms", "10", "--jitter-ms", "0",
                      "--rate", "400", "-p", "1", "-n", "1", "-w", "1",
                      "--no-control", "-o", "o.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(document(tmp_path, "o.json"))
    assert "overloaded" in rows["sleep@400/s/sequential"]["flags"]
    assert "overloaded" not in rows["sleep@400/s/asyncio"]["flags"]
    # Its items queue: the last waits about 200 x 10 ms - 200 x 2.5 ms.
    assert rows["sleep@400/s/sequential"]["latency_max_s"] > 1.0


def test_a_rate_sweep_names_each_models_knee(tmp_path):
    proc = run_bench(["--workload", "sleep", "--model", "sequential,asyncio",
                      "--items", "12", "--latency-ms", "50", "--jitter-ms", "0",
                      "--rate", "sweep", "-p", "1", "-n", "1", "-w", "0",
                      "--no-control", "-o", "s.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = document(tmp_path, "s.json")
    assert len(doc["workloads"]) == 5
    [line] = doc["sweeps"]
    assert line.startswith("rate sweep sleep at 25, 100, 400, 1600, 6400/s: the "
                           "highest rate kept up with a p99 within 100 ms: ")
    # Sequential serves 20 items/s of 50 ms: from 25/s its 12th item waits
    # for the 11 before it (160 ms against a bound of 100 ms), so it cannot
    # keep up at any rate, however quiet the machine.
    parts = {model: (held, notes) for model, held, notes in re.findall(
        r"(\S+) (none|[\d.]+/s)(?: \(([^)]*)\))?", line.split(": ", 2)[-1])}
    assert set(parts) == {"sequential", "asyncio"}, line
    held, notes = parts["sequential"]
    assert held == "none" and notes.startswith("knee 25/s"), line
    held, notes = parts["asyncio"]
    if held != "none" and "knee " in notes:
        assert float(notes.split("knee ")[1].split("/s")[0]) > float(held.rstrip("/s")), line
    # asyncio waits for all 12 at once, so it can keep up at every rate; but
    # a stall of the machine marks any one rate as not kept up (lateness
    # that grows from the first quarter of the items to the last, or a p99
    # past the bound): in whole `make test` runs it kept up to 100/s on a
    # slow day, at 100, 1600 and 6400/s but not 25/s under a 1-CPU quota,
    # and at none under the quota with the other test process busy (the
    # quota's throttle stalls a loop for up to half its 100 ms period). So
    # what is asserted of it is its latency against sequential's in the
    # same run, where the two part by more than a stall: from 100/s,
    # sequential's 12th item waits for the 11 before it (p99 about 500 ms),
    # asyncio's items wait for none (50 ms, and a stall's 50 ms or so
    # more). An event loop that runs its items one at a time (the tasks'
    # limit forced to 1) reads sequential's p99 and fails.
    rows = rows_of(doc)
    for rate in (100, 400, 1600, 6400):
        one = rows["sleep@%d/s/asyncio" % rate]["latency_p99_s"]
        other = rows["sleep@%d/s/sequential" % rate]["latency_p99_s"]
        assert one < other / 2, (rate, one, other, line)
    text = run([REPORT, "s.json"], tmp_path).stdout
    assert "rate sweep sleep" in text


@pytest.mark.quick
def test_the_knee_is_the_first_rate_a_model_fell_behind_at():
    """Known latencies at each rate (the sweep above reads a real run, where
    a busy machine may delay asyncio's batch past the bound): sequential
    keeps up with none; asyncio up to 400/s and not at 1,600/s, its knee,
    then again at 6,400/s (named, not counted); threads-2 at every rate
    but 100/s, where it fell behind the arrivals (its p99 within the
    bound: the rate it achieved is what tells)."""
    from types import SimpleNamespace

    from concbench import schema as K
    from concbench.analysis.latencies import sweep_lines

    p99 = {"sequential": {25: 0.16, 100: 0.6, 400: 0.6, 1600: 0.6, 6400: 0.6},
           "asyncio": {25: 0.05, 100: 0.05, 400: 0.06, 1600: 0.2, 6400: 0.07},
           "threads-2": {25: 0.05, 100: 0.05, 400: 0.05, 1600: 0.05, 6400: 0.05}}
    groups = {}
    for model, by_rate in p99.items():
        for rate, seconds in by_rate.items():
            achieved = rate / 2 if (model, rate) == ("threads-2", 100) else rate
            row = SimpleNamespace(
                ours=True, workload="sleep@%d" % rate, model=model,
                meta={"rate": rate, "latency_ms": 50.0},
                runs=[{K.ARRIVAL_RATE_ACHIEVED: achieved}],
                latency=SimpleNamespace(percentile=lambda share, s=seconds: s))
            groups.setdefault(row.workload, []).append(row)
    [line] = sweep_lines(groups)
    assert line == (
        "rate sweep sleep at 25, 100, 400, 1600, 6400/s: the highest rate kept up "
        "with a p99 within 100 ms: sequential none (knee 25/s); asyncio 400/s "
        "(knee 1600/s; kept up again at 6400/s); threads-2 25/s (knee 100/s; kept "
        "up again at 400/s, 1600/s, 6400/s)"), line


@pytest.mark.parametrize("value, said", [
    ("0", "--rate: 0 is not a rate above 0 items per second"),
    ("-5", "--rate: -5 is not a rate above 0 items per second"),
    ("fast", "--rate: 'fast' is not a rate (N or N/s items per second, or sweep)"),
])
def test_a_bad_rate_is_one_line_and_nothing_written(tmp_path, value, said):
    proc = run_bench(["--workload", "sleep", "--rate", value, "-o", "x.json"], tmp_path)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_a_rate_for_cpu_work_is_refused(tmp_path):
    proc = run_bench(["--workload", "sleep,encode", "--rate", "100", "-o", "x.json"],
                     tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("bench.py: error: --rate applies to IO workloads "
                                   "(items that wait), not to encode, a cpu workload")
    assert not (tmp_path / "x.json").exists()


def test_latency_overhead_pairs_each_batch_with_the_model_unrecorded(tmp_path):
    """--latency-overhead: each model's batch beside the same model's
    unrecorded, and the report's speedup is their ratio, recomputed here
    from the file's pairs. What recording costs (at most 2%) is a measured
    figure, docs/figures.md's, not this test's: under a 1-CPU quota, a
    throttled batch in one of these few pairs read the ratio 0.38x."""
    proc = run_bench(["--workload", "encode", "--model", "sequential,asyncio", "--items", "500",
                      "--latency-overhead", "--no-control", "-p", "2", "-n", "2",
                      "-w", "1", "-o", "v.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "v.json"))
    bench = suite.get_benchmark("encode/asyncio")
    assert bench.get_metadata()["paired_with"] == "itself unrecorded"
    logs = []
    for run_ in bench.get_runs():
        twin = [float(x) for x in run_.get_metadata()["paired_reference_s"].split()]
        assert len(twin) == len(run_.values) == 2
        logs.append(statistics.median(math.log(a / b) for a, b in zip(twin, run_.values)))
    row = rows_of(document(tmp_path, "v.json"))["encode/asyncio"]
    assert row["speedup"] == pytest.approx(math.exp(statistics.fmean(logs)), rel=1e-9)


@pytest.mark.quick
def test_the_unrecorded_twin_runs_in_the_worker_itself(monkeypatch):
    """Both sides of the overhead's ratio are the same model: run in one
    process, they see the same state, and only the recording differs (a
    forked copy of the worker read 4-6% apart on encode, where recording
    costs 0.1%)."""
    import atexit

    from concbench import workloads
    from concbench.run.cell import Cell
    from concbench.models import parse

    workload = workloads.get("sleep")(items=4, latency_ms=0.0, jitter_ms=0.0)
    bench = Cell(workload, parse("asyncio"), "worker", overhead=True)
    prepared = bench.prepare()
    try:
        assert bench.partner_process is None
        assert bench.partner.model.name == "asyncio" and not bench.partner.record
        assert bench.record
        # The twin's batch is watched as the benchmark's is: a memory
        # sampler during a batch of a few ms costs it 1-1.5%, which
        # watching one side only would count as recording's cost.
        from concbench.run import batch, worker
        watched = []

        class Probe:
            def __init__(self, partner=None):
                watched.append("start")

            def finish(self):
                watched.append("finish")
        monkeypatch.setattr(batch, "BatchProbe", Probe)
        seconds, failures = worker.run_partner(bench, prepared)
        assert seconds > 0 and failures == 0
        assert watched == ["start", "finish"]
    finally:
        for model in (bench.model, bench.partner.model):
            model.close()
            atexit.unregister(model.close)


async def _sleeps(milliseconds):
    import asyncio
    if milliseconds:
        await asyncio.sleep(milliseconds / 1000)
    return milliseconds


def _sleeps_sync(milliseconds):
    return milliseconds


# uvloop's timers keep libuv's time in whole milliseconds: a sleep of 10 ms
# was seen to end after 9.8.
EARLY = 0.002


# The eager task factory is Python 3.12's: older suites run the eager
# models' case in a 3.13+ environment (tests/test_interpreters.py).
EVENT_LOOP_MODELS = ["asyncio", "uvloop", "asyncio-limit-2", "hybrid-2", "asyncio-serial",
                     "uvloop-serial"] + (["asyncio-eager"] if sys.version_info >= (3, 12)
                                         else [])


@pytest.mark.quick
@pytest.mark.parametrize("model_name", EVENT_LOOP_MODELS)
def test_event_loop_models_stamp_each_item_themselves(model_name):
    """The event-loop models read the clock as each item ends, instead of
    awaiting the stamped form (a coroutine more per item): the ends are
    each item's own, and a task that finished as it was created (eager,
    an item that never suspends) is received at once."""
    from concbench import models
    from concbench.item_stamps import Stamped, clock, stamp_async
    from models.base import BatchClock

    model = models.parse(model_name)
    assert not model.supports(None)
    items = [60, 0, 20, 40, 5, 10]
    batch = BatchClock()
    stamped = model.run(Stamped(_sleeps_sync), stamp_async(_sleeps), items, batch)
    over = clock()
    stamped = list(stamped)
    assert [result for result, _, _ in stamped] == items
    ends = [ended for _, _, ended in stamped]
    assert all(batch.began <= ended <= over for ended in ends)
    if model.latency_from == "item":
        # Each item is taken up as the one before it ends.
        for (_, started, ended), before, ms in zip(stamped[1:], stamped, items[1:]):
            assert started == before[2] and ended - started >= ms / 1000 - EARLY
        return
    assert all(started is None for _, started, _ in stamped)
    if model.concurrency is None:
        # Every item in progress from the start: each ends after its own
        # sleep, and of one loop's items, those that sleep longer end later
        # (run one after another, they would end in the list's order, the
        # 60 ms one first; a loop fires its timers by deadline, so a busy
        # machine's pauses delay them all without reordering them). The
        # loops of hybrid-N each take every N-th item, in threads of their
        # own: beside a busy loop, one thread waited 5 ms for a CPU, and
        # its 0 ms item ended after the other loop's 5 ms one.
        for ms, ended in zip(items, ends):
            assert ms / 1000 - EARLY <= ended - batch.began, (ms, ends)
        loops = getattr(model, "threads", 1)
        for first in range(loops):
            share = range(first, len(items), loops)
            order = sorted(share, key=lambda index: items[index])
            assert [ends[index] for index in order] == sorted(ends[index] for index in share)


@pytest.mark.quick
def test_hybrid_with_more_threads_than_items_stamps_them_all():
    from concbench import models
    from concbench.item_stamps import Stamped, stamp_async

    stamped = list(models.parse("hybrid-4").run(
        Stamped(_sleeps_sync), stamp_async(_sleeps), [5, 0]))
    assert [result for result, _, _ in stamped] == [5, 0]
    assert all(ended is not None for _, _, ended in stamped)


@pytest.mark.quick
@pytest.mark.parametrize("model_name", ["asyncio", "asyncio-serial", "hybrid-2"])
def test_a_stamped_item_that_raises_still_ends_the_batch(model_name):
    from concbench import models
    from concbench.item_stamps import Stamped, stamp_async

    async def fails(item):
        if item == 3:
            raise ValueError("item 3 is bad")
        return item

    with pytest.raises(ValueError, match="item 3 is bad"):
        models.parse(model_name).run(Stamped(_sleeps_sync), stamp_async(fails),
                                     list(range(8)))


@pytest.mark.quick
@pytest.mark.parametrize("model_name", ["asyncio", "uvloop"])
def test_a_gathering_model_reads_the_clock_once_per_pass(model_name):
    """200 items that each yield once complete in one pass of the loop and
    are received in the next: they share one end, read when the pass after
    that begins, and the batch pays for one clock read, not 200."""
    from concbench import models
    from concbench.item_stamps import Stamped, stamp_async
    from models.base import BatchClock

    async def yields(item):
        import asyncio
        await asyncio.sleep(0)
        return item

    batch = BatchClock()
    stamped = list(models.parse(model_name).run(
        Stamped(_sleeps_sync), stamp_async(yields), list(range(200)), batch))
    assert [result for result, _, _ in stamped] == list(range(200))
    assert len({ended for _, _, ended in stamped}) == 1


async def _yields(item):
    import asyncio
    await asyncio.sleep(0)
    return item


@pytest.mark.quick
def test_the_sampler_times_every_item_unless_items_are_cheap():
    from concbench.item_sampling import ItemSampler

    slow = ItemSampler()
    slow.learn(50, 50 * 20e-3)          # 20 ms items: every one timed
    assert slow.every == 1 and slow.gaps is None
    cheap = ItemSampler()
    cheap.learn(2000, 2000 * 2.5e-6)    # asyncio.sleep(0) under asyncio
    # STAMP_COST / (BUDGET * 2.5 us) = 64
    assert cheap.every == 64 and cheap.gaps is not None
    cheap.learn(2000, 2000 * 20e-3)     # fixed for the process once learnt
    assert cheap.every == 64
    encode = ItemSampler()
    encode.learn(500, 500 * 35e-6)      # encode's items: a read is 0.3% of one
    assert encode.every == 1 and encode.gaps is None
    once = ItemSampler()
    once.learn(500, 500 * 35e-6)
    once.learn(2000, 2000 * 2.5e-6)     # learnt from the first batch only
    assert once.every == 1
    edge = ItemSampler()
    edge.learn(0, 1.0)
    assert edge.every == 1 and edge.gaps is None
    assert edge.learn_from_ends([5.0]) is None and not edge.learnt


@pytest.mark.quick
def test_a_stall_in_the_first_batch_does_not_make_cheap_items_look_dear():
    """A serial loop's 2,000 items of 2.5 us, one of them stalled 50 ms (a
    throttled CPU): their mean, 27.5 us, is past the 20 us below which a
    clock read costs more than the budget, so that every item would be
    timed for good; the median gap is the items' own cost."""
    from concbench.item_sampling import ItemSampler

    ends = [1.0 + 2.5e-6 * n for n in range(2001)]
    ends[1000:] = [end + 0.05 for end in ends[1000:]]
    stalled = ItemSampler()
    stalled.learn_from_ends(ends)
    assert stalled.every == 64 and stalled.gaps is not None
    # Every item as dear as the stall made their mean: every one timed.
    dear = ItemSampler()
    dear.learn_from_ends([1.0 + 27.5e-6 * n for n in range(2001)])
    assert dear.every == 1 and dear.gaps is None


@pytest.mark.quick
def test_sampled_items_fall_at_random_so_a_periodic_cost_keeps_its_share():
    """A cost that comes back every 50 items (a garbage collection every so
    many allocations) is timed at its true rate, 1 in 50; a fixed stride
    of 64 would time it in every 25th sample or never."""
    from itertools import islice

    from concbench.item_sampling import ItemSampler

    sampler = ItemSampler()
    sampler.learn(2000, 2000 * 1.25e-6)
    assert sampler.every == 128
    gaps = list(islice(sampler.gaps, 8192))     # twice round the table
    assert gaps[:4096] == gaps[4096:]
    positions, at = [], -1
    for gap in gaps[:4096]:
        at += gap + 1
        positions.append(at)
    assert 124 < at / len(positions) < 132
    share = sum(1 for at in positions if at % 50 == 0) / len(positions)
    assert 0.012 < share < 0.028, share     # 1/50 +- 3.6 standard errors


@pytest.mark.quick
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_serial_loop_times_one_cheap_item_in_every(loop):
    """asyncio.sleep(0) items take 1-3 us one after another; a clock read
    per item would cost 3-8% of the batch. The first batch times every
    item and learns that; the next ones time one item in ``every`` and
    return every result, checked as before."""
    from concbench import models
    from concbench.item_stamps import Stamped, stamp_async

    model = models.parse(loop + "-serial")
    form = Stamped(_sleeps_sync), stamp_async(_yields)
    first = list(model.run(*form, list(range(2000))))
    assert all(ended is not None for _, _, ended in first)
    every = model.sampler.every
    assert every >= 8 and every & (every - 1) == 0, every
    assert model.run_labels() == {"latency_every": every}
    items = list(range(20000))
    stamped = list(model.run(*form, items))
    assert [result for result, _, _ in stamped] == items
    timed = [(started, ended) for _, started, ended in stamped if ended is not None]
    assert all(started is None for _, started, ended in stamped if ended is None)
    expected = len(items) / every
    assert 0.6 * expected < len(timed) < 1.4 * expected, (len(timed), every)
    assert all(started <= ended for started, ended in timed)
    # Each timed item's own call, from just before it to just after it: in
    # a serial loop, each starts after the one timed before it ended (timed
    # from the batch's start, they would all overlap).
    assert all(before[1] <= after[0] for before, after in zip(timed, timed[1:]))


def _nothing(item):
    return item


def _naps(item):
    import time
    time.sleep(0.002)
    return item


@pytest.mark.quick
def test_a_thread_pool_times_one_cheap_item_in_every():
    """A thread pool's one-item tasks that do next to nothing take 30 us a
    batch's item under four threads; the stamped form cost 3.2% there.
    The first batch times every item and learns that; the next ones call
    the stamped form for one item in ``every`` and the bare one for the
    rest, each result in its place."""
    from concbench import models
    from concbench.item_stamps import Stamped, clock

    model = models.parse("threads-4")
    form = Stamped(_nothing)
    first = list(model.run(form, None, list(range(2000))))
    assert all(ended is not None for _, _, ended in first)
    every = model.sampler.every
    assert every >= 2 and every & (every - 1) == 0, every
    assert model.run_labels() == {"latency_every": every}
    items = list(range(20000))
    began = clock()
    stamped = list(model.run(form, None, items))
    assert [result for result, _, _ in stamped] == items
    timed = [ended for _, _, ended in stamped if ended is not None]
    expected = len(items) / every
    assert 0.6 * expected < len(timed) < 1.4 * expected, (len(timed), every)
    assert all(began <= ended <= clock() for ended in timed)
    # Items that take milliseconds are every one timed.
    slow = models.parse("threads-4")
    for _ in range(2):
        stamped = list(slow.run(form.__class__(_naps), None, list(range(40))))
        assert all(ended is not None for _, _, ended in stamped)
    assert slow.sampler.every == 1 and slow.run_labels() == {}


@pytest.mark.quick
@pytest.mark.parametrize("model_name", ["threads-2-chunk-5", "processes-2-chunk-5",
                                        "processes-2-chunk-1"])
def test_a_pool_whose_results_come_later_stamps_each_task_as_it_comes(model_name):
    """Where a task's results reach the caller after its items end (a
    chunk's together, or pickled back), that receipt is each item's end:
    the items run bare, and one clock read per task stamps them."""
    from concbench import models
    from concbench.item_stamps import Stamped, clock

    model = models.parse(model_name)
    items = list(range(20))
    began = clock()
    stamped = model.run(Stamped(_naps), None, items)
    over = clock()
    stamped = list(stamped)
    assert [result for result, _, _ in stamped] == items
    assert all(started is None for _, started, _ in stamped)
    ends = [ended for _, _, ended in stamped]
    chunk = model.chunk or 1
    for first in range(0, len(items), chunk):
        # A chunk's items arrive together, after the chunk's last nap.
        assert len(set(ends[first:first + chunk])) == 1
        assert ends[first] - began >= 0.002 * min(chunk, len(items) - first)
    assert ends == sorted(ends) and began < ends[0] and ends[-1] <= over


def test_a_run_says_which_share_of_its_items_it_timed(tmp_path):
    proc = run_bench(["--workload", "sleep", "--model", "uvloop-serial", "--items", "2000",
                      "--latency-ms", "0", "--jitter-ms", "0", "-p", "1", "-n", "2",
                      "-w", "1", "--no-control", "-o", "s.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "s.json"))
    (run_,) = suite.get_benchmark("sleep/uvloop-serial").get_runs()
    meta = run_.get_metadata()
    every = meta["latency_every"]
    assert every >= 8
    timed = Histogram.decode(meta["latency_hist"]).total
    assert 0.5 * 2 * 2000 / every < timed < 1.5 * 2 * 2000 / every
    row = rows_of(document(tmp_path, "s.json"))["sleep/uvloop-serial"]
    assert row["latency_items"] == timed


@pytest.mark.quick
def test_the_delivered_rate_is_the_schedule_kept_up_with_or_the_capacity():
    """An open-loop batch of 200 items due at 100/s. A model that keeps up
    (each item 10 ms late, give or take jitter) delivers 100/s; one that
    serves an item in 20 ms, one at a time, falls behind and delivers the
    50/s it can serve, however the jitter of single items falls."""
    import random

    from concbench.run.batch import delivered_rate

    rnd = random.Random(3)
    due = [index / 100 for index in range(200)]
    kept = [at + 0.010 + rnd.uniform(-0.004, 0.004) for at in due]
    assert delivered_rate(due, kept, 100) == pytest.approx(100, rel=0.02)
    behind, free = [], 0.0
    for at in due:
        free = max(free, at) + 0.020 + rnd.uniform(-0.002, 0.002)
        behind.append(free)
    assert delivered_rate(due, behind, 100) == pytest.approx(50, rel=0.05)
    # Too few items for quarters: results over their own span.
    assert delivered_rate([0.0, 0.01, 0.02], [0.0, 0.02, 0.04], 100) == pytest.approx(50)

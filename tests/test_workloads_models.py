"""Every workload under every model family returns a verified result."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from concbench import models
from concbench import workloads
from concbench.workloads.base import CheckError

TINY = {
    "encode": {"items": 30},
    "rotate": {"items": 4, "image_size": 64, "rotations": 3},
    "sleep": {"items": 12, "latency_ms": 2.0, "jitter_ms": 1.0},
}

MODELS = [
    "sequential",
    "threads-3",
    "threads-2-reuse",
    "threads-2-chunk-4",
    "threads-3-chunk-2-reuse",
    "processes-2-chunk-2",
    "processes-2-chunk-1-reuse",
    "processes-1-chunk-3-spawn",
    "processes-2-chunk-2-forkserver",
    "asyncio",
    "uvloop",
    "asyncio-limit-2",
    "asyncio-serial",
    "uvloop-serial",
    "hybrid-2",
    "hybrid-5-uvloop",
]


FIRST_BATCH = str(Path(__file__).with_name("first_batch.py"))


def imported_by_a_first_batch(workload_name, model_name, params):
    """The modules a fresh worker's first timed batch imports, and the
    processes it starts that outlive it (first_batch.py)."""
    proc = subprocess.run([sys.executable, FIRST_BATCH, workload_name, model_name,
                           json.dumps(params)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def make(workload_name):
    workload = workloads.get(workload_name)(**TINY[workload_name])
    items = workload.make_items()
    return workload, items, workload.reference(items)


def run_model(model, workload, items):
    model.open()
    try:
        return model.run(workload.sync_function(), workload.async_function(), items)
    finally:
        model.close()


@pytest.mark.quick
@pytest.mark.parametrize("workload_name", sorted(TINY))
@pytest.mark.parametrize("model_name", MODELS)
def test_model_runs_workload_verified(workload_name, model_name):
    workload, items, reference = make(workload_name)
    model = models.parse(model_name)
    assert model.name == model_name
    results = run_model(model, workload, items)
    summary = workload.check(results, reference)
    assert summary["items"] == len(items) == TINY[workload_name]["items"]
    assert summary["failures"] == 0


@pytest.mark.quick
def test_inputs_are_seeded_and_differ_by_seed():
    for name, params in TINY.items():
        cls = workloads.get(name)
        first = cls(**params).make_items()
        again = cls(**params).make_items()
        other = cls(**dict(params, seed=2)).make_items()
        if name == "rotate":
            first, again, other = ([im.tobytes() for im in x]
                                   for x in (first, again, other))
        assert first == again
        assert first != other


@pytest.mark.quick
def test_encode_counts_bytes_not_characters():
    workload, items, reference = make("encode")
    assert sum(reference) > sum(len(url) for url in items)
    lengths = [len(url.partition("?q=")[2]) for url in workload.make_items()]
    assert lengths[:8] == [26, 52, 104, 208, 416, 832, 1664, 26]
    # The item function and the independent reference agree.
    fn = workload.sync_function()
    assert [fn(url) for url in items] == reference


@pytest.mark.quick
def test_rotate_result_is_a_digest_of_rotated_pixels():
    workload, items, reference = make("rotate")
    assert len(set(reference)) == len(items)
    # Rotating changes the pixels: the digest is not of the input.
    import hashlib
    unrotated = hashlib.blake2b(items[0].tobytes(), digest_size=16).hexdigest()
    assert reference[0] != unrotated


class Dropping(models.families()[0]):
    """Sequential, but loses the last item."""

    def run(self, sync_fn, async_fn, items, clock=None):
        return super().run(sync_fn, async_fn, items)[:-1]


class Corrupting(models.families()[0]):
    """Sequential, but one item's result is wrong."""

    def run(self, sync_fn, async_fn, items, clock=None):
        results = super().run(sync_fn, async_fn, items)
        results[len(results) // 2] = "corrupt"
        return results


class Reordering(models.families()[0]):
    def run(self, sync_fn, async_fn, items, clock=None):
        return list(reversed(super().run(sync_fn, async_fn, items)))


@pytest.mark.quick
@pytest.mark.parametrize("workload_name", sorted(TINY))
@pytest.mark.parametrize("broken", [Dropping, Corrupting, Reordering])
def test_broken_model_is_caught(workload_name, broken):
    workload, items, reference = make(workload_name)
    results = broken().run(workload.sync_function(), workload.async_function(),
                           items)
    with pytest.raises(CheckError):
        workload.check(results, reference)


def failing_item(item):
    if item == 3:
        raise ValueError("item 3 is bad")
    return item


async def async_failing_item(item):
    return failing_item(item)


@pytest.mark.quick
@pytest.mark.parametrize("model_name", MODELS)
def test_exception_in_an_item_is_not_swallowed(model_name):
    model = models.parse(model_name)
    model.open()
    try:
        with pytest.raises(ValueError, match="item 3 is bad"):
            model.run(failing_item, async_failing_item, list(range(8)))
    finally:
        model.close()


def stamped_wait(item):
    """50 ms of waiting, and when it began and ended: CLOCK_MONOTONIC is one
    clock for every process of the machine."""
    began = time.monotonic()
    time.sleep(0.05)
    return began, time.monotonic()


async def async_stamped_wait(item):
    import asyncio

    began = time.monotonic()
    await asyncio.sleep(0.05)
    return began, time.monotonic()


def most_at_once(spans):
    """The most (began, ended) spans under way at one moment (one that ends
    as another begins is not beside it)."""
    under_way = most = 0
    for _, step in sorted([(ended, -1) for _, ended in spans]
                          + [(began, 1) for began, _ in spans]):
        under_way += step
        most = max(most, under_way)
    return most


ONE_BY_ONE = ("sequential", "asyncio-serial")


@pytest.mark.quick
@pytest.mark.parametrize("model_name", ONE_BY_ONE + (
    "threads-8", "threads-8-chunk-2", "processes-4-chunk-1", "asyncio", "uvloop",
    "hybrid-2", "hybrid-4-uvloop", "asyncio-limit-8"))
def test_concurrent_models_overlap_io(model_name):
    """Guards against "concurrent" code that runs items one by one: a
    concurrent model has items waiting at the same moment; sequential and
    asyncio-serial, which run them one by one, never more than one. Read
    from when each item began and ended, not from the batch's time: under a
    1-CPU quota beside another suite, a pool of four processes took 0.71 s
    to start and wait 16 items of 50 ms, against sequential's 0.82 s."""
    model = models.parse(model_name)
    model.open()
    try:
        spans = model.run(stamped_wait, async_stamped_wait, list(range(16)))
    finally:
        model.close()
    assert len(spans) == 16
    if model_name in ONE_BY_ONE:
        assert most_at_once(spans) == 1, spans
    else:
        assert most_at_once(spans) >= 2, spans


@pytest.mark.quick
@pytest.mark.parametrize("name, message", [
    ("threads-0", "the number of threads must be at least 1"),
    ("processes--1", "expected processes-N-chunk-C"),
    ("processes-2-chunk-0", "the chunk size must be at least 1"),
    ("threads-2-chunk-0", "the chunk size must be at least 1"),
    ("threads-2-chunks-4", "expected threads-N"),
    ("interpreters-0", "the number of interpreters must be at least 1"),
    ("interpreters-2-chunk-0", "the chunk size must be at least 1"),
    ("asyncio-limit-0", "the concurrency limit must be at least 1"),
    ("hybrid-0", "the number of threads must be at least 1"),
    ("fibers-4", "unknown model"),
])
def test_malformed_model_names(name, message):
    with pytest.raises(models.ModelError, match=message):
        models.parse(name)


@pytest.mark.parametrize("model_name", [
    "sequential", "threads-2", "threads-3-reuse", "processes-2-chunk-2",
    "processes-2-chunk-2-reuse", "processes-2-chunk-2-forkserver",
    "processes-3-chunk-1-reuse-spawn",
    "processes-1-chunk-3-spawn", "asyncio", "uvloop", "uvloop-serial", "hybrid-2-uvloop"])
def test_a_first_batch_imports_nothing(model_name):
    """What only a worker's first batch would do is done before the batches:
    uvloop's import, a process pool's lock and start modules, the
    forkserver's server, spawn's resource tracker, a reused pool's workers
    (on the first batch's clock, 3 to 30 ms that no later batch pays, and a
    warm-up kept for it)."""
    assert imported_by_a_first_batch("sleep", model_name, TINY["sleep"]) == {
        "modules": [], "processes": []}

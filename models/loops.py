"""The event-loop machinery of the asyncio, uvloop, eager-task, serial and
hybrid models: a new loop of either kind, run and closed as asyncio.run()
does; the batch's clock restarted once every loop has opened its
resources; tasks gathered once per pass of the loop, stamped as their done
callbacks run."""

import asyncio
import threading

from concbench.item_stamps import StampedResults, unwrapped
from concbench.item_stamps import clock as latency_clock


def new_loop(loop):
    if loop == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run_on_new_loop(loop, async_fn, main, concurrency=1, ready=None, done=None):
    """Run ``main()`` on a new event loop of kind ``loop`` and close it.

    Mirrors asyncio.run() (remaining tasks cancelled, async generators and the
    default executor shut down) for both loop kinds, on every Python version.
    If ``async_fn`` has a ``close_loop`` coroutine method (a client session
    opened per loop), it is awaited after ``main()``, on the same loop. If it
    has an ``open_loop(concurrency)`` coroutine method, that is awaited first,
    then ``ready()`` is called; ``done()`` is called when ``main()`` is over:
    the model's way to keep what open_loop opens out of the timed region.
    """
    open_loop = getattr(async_fn, "open_loop", None)
    close_loop = getattr(async_fn, "close_loop", None)

    async def main_then_close():
        try:
            if open_loop is not None:
                await open_loop(concurrency)
                if ready is not None:
                    ready()
            result = await main()
            if open_loop is not None and done is not None:
                done()
            return result
        finally:
            if close_loop is not None:
                await close_loop()

    event_loop = new_loop(loop)
    try:
        asyncio.set_event_loop(event_loop)
        return event_loop.run_until_complete(main_then_close())
    finally:
        try:
            pending = asyncio.all_tasks(event_loop)
            for task in pending:
                task.cancel()
            if pending:
                event_loop.run_until_complete(
                    asyncio.gather(*pending, return_exceptions=True))
            event_loop.run_until_complete(event_loop.shutdown_asyncgens())
            event_loop.run_until_complete(event_loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            event_loop.close()


def clock_callbacks(clock):
    """run_on_new_loop's ready and done for a model with one event loop."""
    if clock is None:
        return {}
    return {"ready": clock.restart, "done": clock.stop}


class LoopBarrier:
    """ready and done for several loops in threads: the clock restarts when
    every loop is ready and stops when every loop is done. A loop that fails
    breaks the barriers, so that the others raise instead of waiting."""

    def __init__(self, parties, clock):
        self.ready_barrier = threading.Barrier(
            parties, action=clock.restart if clock else None)
        self.done_barrier = threading.Barrier(
            parties, action=clock.stop if clock else None)

    def callbacks(self):
        return {"ready": self.ready_barrier.wait, "done": self.done_barrier.wait}

    def abort(self):
        self.ready_barrier.abort()
        self.done_barrier.abort()


async def gather_items(async_fn, items, limit=None):
    """Every item a task, at most ``limit`` in progress when one is given;
    their results in item order, stamped (result, None, ended) when the
    item form is (``concbench.item_stamps.stamp_async``, ``StampedResults``).

    Each task gets one done callback, which counts it, as asyncio.gather
    and TaskGroup do per task, without gather's handling of its arguments,
    which is dear on items that do next to nothing (docs/figures.md,
    "bench.py against the bare script, on both builds"). The first item to
    raise (or be cancelled) ends the batch with its exception, as gather's
    does.

    The loop runs the done callbacks a pass at a time: an item's end is the
    end of the pass whose callback received it, read once per pass when the
    next pass begins, since a clock read per item slows a batch of cheap
    items and one per pass does not (measured in 36ee677: git show
    36ee677). An eager task that completed as it was created is received,
    and stamped, then."""
    function, stamp = unwrapped(async_fn)
    if limit is None:
        coroutines = [function(item) for item in items]
    else:
        semaphore = asyncio.Semaphore(limit)

        async def limited(item):
            async with semaphore:
                return await function(item)
        coroutines = [limited(item) for item in items]
    if not coroutines:      # hybrid's share when it has more threads than items
        return StampedResults([], tuple) if stamp else []
    loop = asyncio.get_running_loop()
    gathered = loop.create_future()
    remaining = len(coroutines)
    ended = {}          # a task that completed as it was created: its end
    passes = []         # (a pass's end, the tasks its callbacks received)
    receiving = None    # the tasks received in the pass under way

    def end_pass(tasks):
        nonlocal receiving
        passes.append((latency_clock(), tasks))
        receiving = None

    def count(task):
        nonlocal remaining
        if gathered.done():
            if not task.cancelled():
                task.exception()        # retrieved, as gather retrieves it
        elif task.cancelled():
            gathered.set_exception(asyncio.CancelledError())
        elif task.exception() is not None:
            gathered.set_exception(task.exception())
        else:
            remaining -= 1
            if not remaining:
                gathered.set_result(None)

    def received(task):
        nonlocal receiving
        if stamp:
            if receiving is None:
                receiving = []
                loop.call_soon(end_pass, receiving)
            receiving.append(task)
        count(task)

    tasks = []
    for coroutine in coroutines:
        task = loop.create_task(coroutine)
        tasks.append(task)
        if task.done():
            if stamp:
                ended[task] = latency_clock()
            count(task)
        else:
            task.add_done_callback(received)
    try:
        await gathered
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        raise
    if receiving is not None:
        end_pass(receiving)
    results = [task.result() for task in tasks]
    if not stamp:
        return results

    def stamps():
        for end, received_then in passes:
            for task in received_then:
                ended[task] = end
        return ((None, ended[task]) for task in tasks)
    return StampedResults(results, stamps)

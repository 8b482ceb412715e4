"""Presets: pyperf run counts by name, and the seeds' experiments.

``quick`` covers every workload x model family on small sizes (a smoke run,
under a minute); ``default`` is the main job (under ten minutes on 2 cores:
docs/figures.md, "A default run from a fresh clone"):
about eight models a workload, since every model more is a rival in the
workload's races, whose level it splits and whose rounds it shares;
``wide`` is the same sizes with the variants (reused pools, more chunk sizes
and worker counts, limits, serial loops), about 15 a workload, in twenty
minutes; ``full`` uses the seeds' own sizes, however long that takes. Each workload
states its own sizes and model lists for these presets (its ``PRESETS``);
a model family may add models to every workload of a preset (its
``PRESETS``). A scenario is a preset that states its workloads itself.

Runner settings: each value is one whole batch (tens of milliseconds to
seconds), so pyperf's loop calibration is pointless (loops=1), and one warm-up
per worker absorbs first-call costs (imports, lazy pools). These are the
first round's: a worker paired with the reference (``concbench.run.schedule``)
runs ``values`` pairs and no warm-up (fewer pairs, down to two, where its
workload's pairs take long: ``calibration.first_values``), one paired by
round, and the reference's own, ``round_values`` values after its warm-up.
From the next round on, what the run measured sizes each worker
(``concbench.run.calibration``: the pairs that answer its open question
soonest, a warm-up only where the first batch is slower). -n and -w set
every count.

``max_time`` is the preset's budget for the whole run: after its rounds,
further rounds run only for what is still open (``concbench.run.allocation``),
while the budget allows. So the default preset starts with two rounds, and
the time goes to the rows that need more. A scenario reproduces an
experiment with its own run counts and adds none unless asked.
"""

from concbench.ladder import (ALL, DEFAULT, POOL_MAP, PROCESS_POOL_DEFAULT, QUICK,
                              THREAD_POOL_DEFAULT, USABLE, ladder)

PRESETS = {
    "quick": {"runner": {"processes": 2, "values": 2, "warmups": 1},
              "round_values": 1, "max_time": 50},
    "default": {"runner": {"processes": 2, "values": 3, "warmups": 1},
                "round_values": 1, "max_time": 510, "ceiling": True},
    "wide": {"runner": {"processes": 2, "values": 3, "warmups": 1},
             "round_values": 1, "max_time": 1200, "ceiling": True},
    "full": {"runner": {"processes": 5, "values": 3, "warmups": 1},
             "round_values": 1, "max_time": 3 * 3600, "ceiling": True},
}

# --precision without --max-time, in a preset without a budget (a scenario).
PRECISION_BUDGET = 1800

DEFAULT_PRESET = "default"


# -- scenarios: the seeds' experiments, rerun with verification -----------------
#
# Each is a preset limited to one seed's workload and models, with that
# experiment's parameters where a 2-core machine allows; "scaled" says what
# differs and why, and goes into the results' metadata. RESULTS.md holds their
# results beside the seeds' published numbers.

SCENARIOS = {
    "seeds-000-cpu": {
        "about": "seeds/000, CPU: UTF-8 size of 100,000 URLs under sync, "
                 "asyncio and 2 to 10 threads",
        "scaled": "",
        "runner": {"processes": 1, "values": 3, "warmups": 1},
        "workloads": {"encode": {"items": 100_000}},
        "models": {"encode": ["sequential", "asyncio"]
                   + ["threads-%d" % n for n in (2, 4, 6, 8, 10)]},
    },
    "seeds-000-io": {
        "about": "seeds/000, IO: HTTP GETs under sync, asyncio, 10 to 1,000 "
                 "threads, and 10 to 1,000 threads each running an event loop",
        "scaled": "1,000 requests of 20 +- 5 ms instead of 10,000 of ~180 ms "
                  "(sync alone would take 30 minutes per batch)",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"http": {"items": 1000, "latency_ms": 20.0, "jitter_ms": 5.0,
                               "size_bytes": 1500}},
        "models": {"http": ["sequential", "asyncio", "threads-10", "threads-100",
                            "threads-1000", "hybrid-10", "hybrid-100",
                            "hybrid-1000"]},
    },
    "seeds-001": {
        "about": "seeds/001: 1,000 requests with no added latency; thread pool "
                 "recreated, reused, and one thread per request; asyncio tasks",
        "scaled": "pool size 100; the pool is recreated per batch, not per "
                  "chunk; asyncio's for-loop and map() variants create the same "
                  "tasks, so one asyncio model stands for both",
        "runner": {"processes": 2, "values": 3, "warmups": 1},
        "workloads": {"http": {"items": 1000, "latency_ms": 0.0, "size_bytes": 1024}},
        "models": {"http": ["sequential", "threads-100", "threads-100-reuse",
                            "threads-1000", "asyncio", "uvloop"]},
    },
    "seeds-002": {
        "about": "seeds/002: 1,000 tasks that sleep, ThreadPoolExecutor's "
                 "default size against asyncio, with CPU, peak memory and "
                 "context switches",
        "scaled": "30 ms sleeps instead of 3 s (the default pool, 6 threads on 2 "
                  "CPUs, would need 500 s per batch); threads-N-default is "
                  "ThreadPoolExecutor()'s default on the machine that ran it, "
                  "min(32, CPUs + 4)",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"sleep": {"items": 1000, "latency_ms": 30.0, "jitter_ms": 0.0}},
        "models": {"sleep": ["sequential", THREAD_POOL_DEFAULT, "threads-1000",
                             "asyncio", "uvloop"]},
    },
    "seeds-003-io": {
        "about": "seeds/003, IO: 50 items with seeded latency uniform in 0 to "
                 "0.66 s; threads 8 to 1,024, processes 1 to 32 with 1 or 5 "
                 "items per task",
        "scaled": "",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"sleep": {"items": 50, "latency_ms": 330.0, "jitter_ms": 330.0}},
        "models": {"sleep": (["sequential", "asyncio-serial", "asyncio"]
                             + ["threads-%d" % n for n in (8, 32, 256, 1024)]
                             + ["processes-%d-chunk-%d" % (n, c)
                                for c in (1, 5) for n in (1, 2, 8, 32)])},
    },
    "seeds-003-cpu": {
        "about": "seeds/003, CPU: 64 images rotated with Pillow, threads 2 to "
                 "128, processes 2 to 128",
        "scaled": "1024 x 1024 images rotated 10 times by 1 degree",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"rotate": {"items": 64, "image_size": 1024}},
        "models": {"rotate": (["sequential", "asyncio"]
                              + ["threads-%d" % n for n in (2, 8, 32, 64, 128)]
                              + ["processes-%d-chunk-1" % n
                                 for n in (2, 4, 8, 16, 32, 128)])},
    },
    "seeds-004": {
        "about": "seeds/004: 500 database queries that wait 100 ms, under "
                 "sequential, processes, threads, asyncio and uvloop "
                 "(on a PostgreSQL of the run's own, or --db-url)",
        "scaled": "one server instead of 500; ThreadPoolExecutor() and "
                  "ProcessPoolExecutor() defaults on the machine that ran it "
                  "(the rows named -default) and 80 connections at most, under "
                  "a stock server's max_connections",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"db": {"items": 500, "latency_ms": 100.0}},
        "models": {"db": ["sequential", PROCESS_POOL_DEFAULT, "processes-32-chunk-1",
                          THREAD_POOL_DEFAULT, "threads-80", "asyncio-limit-80",
                          "uvloop-limit-80"]},
    },
}

PRESETS.update(SCENARIOS)


# A workload that states no PRESETS (a plugin's) runs in every preset under
# its kind's models.
PLUGIN_MODELS = {
    "quick": {"cpu": ["sequential", ladder("threads-{n}", QUICK),
                      ladder("processes-{n}-chunk-{chunk}", QUICK, chunk=10), "asyncio"],
              "io": ["sequential", "threads-4", ladder("processes-{n}-chunk-1", QUICK),
                     "asyncio", "uvloop", ladder("hybrid-{n}", USABLE)]},
    "default": {"cpu": ["sequential", ladder("threads-{n}", DEFAULT),
                        ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=10),
                        ladder("processes-{n}-chunk-{chunk}", DEFAULT, chunk=10),
                        PROCESS_POOL_DEFAULT, "asyncio"],
                "io": ["sequential", "threads-4", "threads-16", "threads-64",
                       ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8), room=3),
                       "asyncio",
                       "uvloop", ladder("hybrid-{n}", USABLE)]},
    "wide": {"cpu": ["sequential", ladder("threads-{n}", ALL),
                     ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=10),
                     ladder("threads-{n}-reuse", USABLE),
                     ladder("processes-{n}-chunk-{chunk}", ALL, chunk=10),
                     THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                     ladder("processes-{n}-chunk-1", USABLE),
                     ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=POOL_MAP),
                     # A Dask cluster, the step past a process pool.
                     ladder("dask-{n}-chunk-{chunk}", ALL, chunk=10),
                     "asyncio", "uvloop",
                     ladder("hybrid-{n}", USABLE)],
             "io": ["sequential", "threads-4", "threads-16", "threads-64",
                    "threads-16-reuse", ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8)),
                    THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                    "asyncio", "uvloop", "asyncio-limit-8", "uvloop-limit-8",
                    "asyncio-serial", ladder("hybrid-{n}", QUICK)]},
    "full": {"cpu": ["sequential", ladder("threads-{n}", ALL),
                     ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=10),
                     ladder("processes-{n}-chunk-{chunk}", ALL, chunk=10),
                     ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=POOL_MAP),
                     THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT, "asyncio",
                     "uvloop", ladder("hybrid-{n}", USABLE)],
             "io": ["sequential", "threads-4", "threads-16", "threads-64",
                    "threads-256", ladder("processes-{n}-chunk-1", QUICK, counts=(2, 8)),
                    THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                    "asyncio", "uvloop", "asyncio-limit-8", "uvloop-limit-8",
                    ladder("hybrid-{n}", QUICK)]},
}


def workload_plan(preset_name, cls):
    """(parameters, model entries) of workload class ``cls`` in a preset, or
    None if the preset has no such workload. An entry is a model name or a
    family over the machine's ladder (``concbench.ladder``), made names by
    ``concbench.ladder.resolve`` once the batch's size is known."""
    preset = PRESETS[preset_name]
    if "workloads" in preset:       # a scenario states its workloads
        if cls.name not in preset["workloads"]:
            return None
        return dict(preset["workloads"][cls.name]), list(preset["models"][cls.name])
    if not cls.PRESETS and preset_name in PLUGIN_MODELS:
        return {}, list(PLUGIN_MODELS[preset_name][cls.kind])
    plan = cls.PRESETS.get(preset_name)
    if plan is None:
        return None
    return dict(plan["params"]), list(plan["models"])

"""Presets: workload sizes, model lists and pyperf run counts, by name.

``quick`` covers every workload x model family on small sizes (a smoke run,
under a minute); ``default`` is the main job (under ten minutes on 2 cores);
``full`` uses the seeds' own sizes, however long that takes.

Runner settings: each value is one whole batch (tens of milliseconds to
seconds), so pyperf's loop calibration is pointless (loops=1), and one warm-up
per worker absorbs first-call costs (imports, lazy pools). pyperf's 20
processes x 3 values suit microbenchmarks; batches this long are stable with
far fewer values, and the suite has to fit in its time budget.
"""

THREADS_FULL = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
PROCESSES_FULL = [1, 2, 4, 8, 16, 32]

PRESETS = {
    "quick": {
        "runner": {"processes": 2, "values": 2, "warmups": 1},
        "workloads": {
            "encode": {"items": 700},
            "rotate": {"items": 16, "image_size": 128},
            "sleep": {"items": 20, "latency_ms": 5.0, "jitter_ms": 2.0},
            "http": {"items": 60, "latency_ms": 5.0, "size_bytes": 1024},
            "db": {"items": 20, "latency_ms": 5.0},
        },
        "models": {
            "encode": ["sequential", "threads-2", "processes-2-chunk-50",
                       "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
            "rotate": ["sequential", "threads-2", "processes-2-chunk-4",
                       "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
            "sleep": ["sequential", "threads-4", "processes-2-chunk-1",
                      "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
            "http": ["sequential", "threads-8", "processes-2-chunk-1",
                     "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
            "db": ["sequential", "threads-4", "processes-2-chunk-1",
                   "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
        },
    },
    "default": {
        "runner": {"processes": 3, "values": 3, "warmups": 1},
        "workloads": {
            "encode": {"items": 5_000},
            "rotate": {"items": 64, "image_size": 384},
            "sleep": {"items": 50, "latency_ms": 20.0, "jitter_ms": 10.0},
            "http": {"items": 200, "latency_ms": 10.0, "size_bytes": 1024},
            # At most 50 connections at once: under a stock server's
            # max_connections (100 on PostgreSQL, 151 on MariaDB).
            "db": {"items": 50, "latency_ms": 20.0},
        },
        "models": {
            "encode": ["sequential", "threads-2", "threads-4", "threads-8",
                       "threads-4-reuse", "processes-1-chunk-125",
                       "processes-2-chunk-125", "processes-4-chunk-125",
                       "processes-2-chunk-10", "processes-2-chunk-125-reuse",
                       "asyncio", "uvloop", "asyncio-serial", "hybrid-2",
                       "hybrid-4"],
            "rotate": ["sequential", "threads-2", "threads-4", "threads-8",
                       "threads-4-reuse", "processes-1-chunk-4",
                       "processes-2-chunk-4", "processes-4-chunk-4",
                       "processes-2-chunk-1", "processes-2-chunk-4-reuse",
                       "asyncio", "uvloop", "asyncio-serial", "hybrid-2",
                       "hybrid-4"],
            "sleep": ["sequential", "threads-4", "threads-16", "threads-64",
                      "threads-16-reuse", "processes-2-chunk-1",
                      "processes-8-chunk-1", "asyncio", "uvloop",
                      "asyncio-limit-8", "uvloop-limit-8", "asyncio-serial",
                      "hybrid-2", "hybrid-4"],
            "http": ["sequential", "threads-8", "threads-32", "threads-100",
                     "threads-32-reuse", "processes-2-chunk-1",
                     "processes-8-chunk-5", "asyncio", "uvloop",
                     "asyncio-limit-32", "asyncio-serial", "hybrid-2",
                     "hybrid-4"],
            "db": ["sequential", "threads-10", "threads-50", "threads-10-reuse",
                   "processes-2-chunk-1", "processes-8-chunk-1",
                   "processes-8-chunk-1-reuse", "asyncio", "uvloop",
                   "asyncio-limit-10", "asyncio-serial", "hybrid-2", "hybrid-4"],
        },
    },
    "full": {
        "runner": {"processes": 5, "values": 3, "warmups": 1},
        "workloads": {
            "encode": {"items": 100_000},
            "rotate": {"items": 64, "image_size": 1024},
            # seeds/003: 50 items with random 0 to 0.66 s latency.
            "sleep": {"items": 50, "latency_ms": 330.0, "jitter_ms": 330.0},
            # seeds/000: ~100-180 ms per request, 1-2 KB bodies.
            "http": {"items": 2000, "latency_ms": 140.0, "jitter_ms": 40.0,
                     "size_bytes": 1500},
            # seeds/004: 500 queries that each wait 100 ms.
            "db": {"items": 500, "latency_ms": 100.0},
        },
        "models": {
            "encode": (["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL[:5]]
                       + ["processes-%d-chunk-1000" % n for n in PROCESSES_FULL]
                       + ["asyncio", "uvloop", "asyncio-serial"]
                       + ["hybrid-%d" % n for n in (2, 4, 10)]),
            "rotate": (["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL[:7]]
                       + ["threads-4-reuse"]
                       + ["processes-%d-chunk-1" % n for n in PROCESSES_FULL]
                       + ["processes-%d-chunk-4" % n for n in PROCESSES_FULL]
                       + ["processes-2-chunk-4-reuse",
                          "asyncio", "uvloop", "asyncio-serial",
                          "hybrid-2", "hybrid-4"]),
            "sleep": (["sequential"]
                      + ["threads-%d" % n for n in THREADS_FULL]
                      + ["threads-64-reuse"]
                      + ["processes-%d-chunk-%d" % (n, c)
                         for c in (1, 5) for n in PROCESSES_FULL]
                      + ["asyncio", "uvloop", "asyncio-limit-8",
                         "uvloop-limit-8", "asyncio-serial", "uvloop-serial"]
                      + ["hybrid-%d" % n for n in (2, 4, 10, 50)]
                      + ["hybrid-4-uvloop"]),
            "http": (["sequential"]
                     + ["threads-%d" % n for n in (10, 100, 1000)]
                     + ["processes-%d-chunk-10" % n for n in (2, 8, 32)]
                     + ["asyncio", "uvloop", "asyncio-limit-100",
                        "uvloop-limit-100", "asyncio-serial"]
                     + ["hybrid-%d" % n for n in (10, 100, 1000)]),
            # seeds/004 ran 500 queries at once against 500 servers; one stock
            # server takes 100 (PostgreSQL) or 151 (MariaDB) connections, so
            # event-loop models are capped at 80 here (hybrid-N keeps every
            # item in progress, so it is left out).
            "db": (["sequential"]
                   + ["threads-%d" % n for n in (6, 32, 80)]
                   + ["processes-%d-chunk-1" % n for n in (2, 8, 32)]
                   + ["asyncio-limit-80", "uvloop-limit-80", "asyncio-serial"]),
        },
    },
}

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
                  "cores, would need 500 s per batch); threads-6 is "
                  "ThreadPoolExecutor()'s default here, min(32, cores + 4)",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"sleep": {"items": 1000, "latency_ms": 30.0, "jitter_ms": 0.0}},
        "models": {"sleep": ["sequential", "threads-6", "threads-1000", "asyncio",
                             "uvloop"]},
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
                 "(needs --db-url)",
        "scaled": "one server instead of 500; ThreadPoolExecutor() and "
                  "ProcessPoolExecutor() defaults on 2 cores (6 threads, 2 "
                  "processes) and 80 connections at most, under a stock "
                  "server's max_connections",
        "runner": {"processes": 1, "values": 2, "warmups": 1},
        "workloads": {"db": {"items": 500, "latency_ms": 100.0}},
        "models": {"db": ["sequential", "processes-2-chunk-1", "processes-32-chunk-1",
                          "threads-6", "threads-80", "asyncio-limit-80",
                          "uvloop-limit-80"]},
    },
}

PRESETS.update(SCENARIOS)

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

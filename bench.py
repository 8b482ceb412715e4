#!/usr/bin/env python3
"""Benchmark Python's concurrency models under one pyperf Runner.

Registers a matrix of workloads (encode, rotate, sleep, http, db) x
concurrency models (sequential, threads-N, processes-N-chunk-C, asyncio,
uvloop, asyncio-serial, hybrid-N) as ``<workload>/<model>`` benchmarks, in a
fixed order. Each timed value is one batch; every batch's results are checked
against the sequential reference outside the timed region, and a mismatch
stops the run. The code is in the ``concbench`` package.

    ./bench.py -o data.json
    ./bench.py --preset quick --workload rotate --model 'threads-*' -o r.json
    ./bench.py --list
"""

import sys

try:
    from concbench.run.launch import ensure_environment

    ensure_environment("bench.py", __file__)   # or re-run with .venv's Python

    from concbench.run import gil

    gil.watch()     # before any extension is imported: see concbench.run.gil

    from concbench.run.cli import main
except KeyboardInterrupt:   # Ctrl-C while it starts: nothing has started yet
    sys.exit(130)

if __name__ == "__main__":
    main()

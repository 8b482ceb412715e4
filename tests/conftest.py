import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = str(ROOT / "bench.py")

# Set by .ci/run: tests that need a service fail instead of skipping.
REQUIRE_SERVICES = os.environ.get("CONCBENCH_REQUIRE_SERVICES") == "1"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def skip_or_fail(reason):
    """Skip with a reason on a user's machine; fail under .ci/run."""
    if REQUIRE_SERVICES:
        pytest.fail(reason + " (CONCBENCH_REQUIRE_SERVICES=1 forbids skipping)")
    pytest.skip(reason)


def run(args, cwd, timeout=300):
    """Run a command line of the project in a subprocess, as a user would."""
    return subprocess.run([sys.executable] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def run_bench(args, cwd, timeout=300):
    return run([BENCH] + list(args), cwd, timeout)


# pyperf settings for end-to-end runs: as small as pyperf allows.
TINY_RUNNER = ["-p", "1", "-n", "1", "-w", "0", "--quiet"]

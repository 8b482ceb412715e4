"""A test that hangs fails alone, with its traceback, within the per-test
limit (pytest-timeout, ``timeout`` in pyproject.toml), instead of taking
the whole suite's time."""

import subprocess
import sys
import time

import pytest


@pytest.mark.quick
def test_every_test_has_a_time_limit_below_the_suites(pytestconfig):
    limit = float(pytestconfig.getini("timeout"))
    assert 0 < limit <= 420, limit


def test_a_hanging_test_fails_with_its_traceback_and_the_next_runs(tmp_path):
    (tmp_path / "test_hang.py").write_text(
        "import time\n\n"
        "def test_hangs():\n    time.sleep(120)\n\n"
        "def test_after():\n    assert True\n")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-o", "timeout=2", "-q", str(tmp_path / "test_hang.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=100)
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Timeout" in proc.stdout and "time.sleep(120)" in proc.stdout, proc.stdout
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout
    assert took < 60, took

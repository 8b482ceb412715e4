"""The first command works from a clone, or says what to run."""

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, skip_or_fail


def bare_python(tmp_path):
    """A Python without the project's dependencies."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                    str(tmp_path / "bare")], check=True, timeout=120)
    python = tmp_path / "bare" / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import pyperf"],
                          capture_output=True, timeout=60).returncode != 0
    return str(python)


def test_launchers_use_the_checkouts_venv(tmp_path):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        skip_or_fail("the checkout has no .venv (make venv makes it)")
    python = bare_python(tmp_path)
    listed = subprocess.run([python, str(ROOT / "bench.py"), "--preset", "quick",
                             "--workload", "sleep", "--list"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == "sleep/sequential"
    shown = subprocess.run([python, str(ROOT / "report.py"),
                            str(ROOT / "tests" / "data" / "slow.json")],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    # sleep's table, asyncio's row (the text table names a row by its model).
    assert "\nsleep (" in shown.stdout and "\nasyncio " in shown.stdout


def test_without_a_venv_one_line_says_what_to_run(tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("bench.py", "report.py"):
        shutil.copy2(ROOT / name, clone / name)
    shutil.copytree(ROOT / "concbench", clone / "concbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    python = bare_python(tmp_path)
    for name, args in (("bench.py", ["-o", "data.json"]), ("report.py", ["x.json"])):
        proc = subprocess.run([python, str(clone / name)] + args, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        assert lines[0].startswith("%s: error: pyperf" % name)
        assert "run `make venv` in %s" % clone in lines[0]
    assert not (tmp_path / "data.json").exists()


def test_launchers_run_as_a_user_types_them():
    """`./bench.py` and `./report.py`, not `python report.py`: a launcher
    that lost its executable bit failed for users while every test passed."""
    for name, args in (("bench.py", ["--list", "--workload", "sleep"]),
                       ("report.py", [str(ROOT / "tests" / "data" / "slow.json")])):
        proc = subprocess.run(["./" + name] + args, cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, (name, proc.stderr)
        assert ("sleep/" if name == "bench.py" else "\nsleep (") in proc.stdout


@pytest.mark.quick
def test_the_top_folder_holds_no_copy_of_the_projects_metadata():
    """setuptools writes an editable install's egg-info into build/
    (setup.cfg). In the top folder, the first path entry of bench.py's
    processes, Python read the project's entry points from that copy
    first: while tox rewrote it, a worker found no "concbench" pyperf hook
    ("invalid choice: 'concbench'") and the benchmark failed. After the
    .venv's install none is there, and a process whose first path entry is
    the top folder reads the hook from the installed distribution. (With
    setup.cfg gone, the install writes the copy and this fails.)"""
    python = ROOT / ".venv" / "bin" / "python"
    if not python.exists():
        skip_or_fail("the checkout has no .venv (make venv makes it)")
    assert not sorted(ROOT.glob("*.egg-info"))
    found = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                            "print(m.distribution('concurrency-bench')._path); "
                            "print(sorted(e.name for e in m.entry_points(group='pyperf.hook')))"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    where, hooks = found.stdout.splitlines()
    assert "site-packages" in where and "'concbench'" in hooks

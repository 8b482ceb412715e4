"""A run's inputs are made once and shared by its workers, where the
workload allows it; the same inputs and results either way."""

import os
import signal
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT
from concbench.run import inputs
from concbench.workloads.encode import Encode
from concbench.workloads.rotate import Rotate


class Counted(Encode):
    made = 0

    def make_items(self):
        Counted.made += 1
        return super().make_items()


class Private(Counted):
    shared_inputs = False


@pytest.mark.quick
def test_the_first_worker_keeps_them_and_the_others_load_them(tmp_path):
    Counted.made = 0
    workload = Counted(items=300)
    first = inputs.items_and_reference(workload, str(tmp_path))
    again = inputs.items_and_reference(Counted(items=300), str(tmp_path))
    assert Counted.made == 1 and first == again
    assert again[1] == [len(url.encode("utf-8")) for url in again[0]]
    assert len(os.listdir(tmp_path)) == 1
    # Other parameters are other inputs.
    other = inputs.items_and_reference(Counted(items=300, seed=2), str(tmp_path))
    assert Counted.made == 2 and other != first and len(os.listdir(tmp_path)) == 2


@pytest.mark.quick
def test_images_survive_the_trip(tmp_path):
    workload = Rotate(items=2, image_size=32)
    made = inputs.items_and_reference(workload, str(tmp_path))
    loaded = inputs.items_and_reference(Rotate(items=2, image_size=32), str(tmp_path))
    assert [im.tobytes() for im in loaded[0]] == [im.tobytes() for im in made[0]]
    assert loaded[1] == made[1] == workload.reference(made[0])


@pytest.mark.quick
def test_a_workload_that_does_not_allow_it_makes_its_own(tmp_path):
    Counted.made = 0
    inputs.items_and_reference(Private(items=100), str(tmp_path))
    inputs.items_and_reference(Private(items=100), str(tmp_path))
    assert Counted.made == 2 and os.listdir(tmp_path) == []
    # No folder (a worker started by hand): made in place.
    inputs.items_and_reference(Counted(items=100), None)
    assert Counted.made == 3


@pytest.mark.quick
def test_a_damaged_file_is_made_again(tmp_path):
    Counted.made = 0
    inputs.items_and_reference(Counted(items=50), str(tmp_path))
    (path,) = tmp_path.iterdir()
    path.write_bytes(b"not a pickle")
    items, reference = inputs.items_and_reference(Counted(items=50), str(tmp_path))
    assert Counted.made == 2 and len(items) == len(reference) == 50


KILLED = """
import os, signal
from concbench.run import inputs
print(inputs.make_folder(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.quick
def test_the_folder_of_a_killed_master_goes_with_the_next_run(tmp_path, monkeypatch):
    """A master killed outright leaves its folder, which no exit handler
    removed; the next run's master removes it, and not a live run's."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    killed = subprocess.run([sys.executable, "-c", KILLED], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = killed.stdout.strip()
    assert os.path.dirname(left) == str(tmp_path) and os.path.isdir(left)
    living = tempfile.mkdtemp(prefix="%s%d-" % (inputs.PREFIX, os.getpid()))
    other = tmp_path / "concbench-inputs-x"
    other.mkdir()
    made = inputs.make_folder()
    assert sorted(os.listdir(tmp_path)) == sorted(
        os.path.basename(path) for path in (living, made, other))

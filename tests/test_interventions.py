"""What the harness does around the batches can each be left out
(--without), so that what it costs is measured (docs/figures.md, "The
harness leaves the model as it is"): the run says what it left out, and
leaves out just that."""

import json

import pyperf
import pytest

from conftest import ROOT, TINY_RUNNER, run, run_bench


def test_a_run_without_the_harness_says_so_and_does_without(tmp_path):
    everything = "partner,pinning,prime,sampler,probe,collect"
    proc = run_bench(["--workload", "encode", "--items", "60", "--model",
                      "sequential,asyncio-serial", "--no-control", "--without",
                      "collect,probe,sampler,prime,pinning,partner", "-p", "1", "-n", "3",
                      "-w", "0", "--quiet", "-o", "w.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "w.json"))
    assert suite.get_metadata()["harness_without"] == everything
    for bench in suite.get_benchmarks():
        for one in bench.get_runs():
            meta = one.get_metadata()
            assert "probe_s" not in meta
            # The sampler read the tree at each batch's start and end only.
            assert meta["mem_samples"] == 2 * len(one.values), meta
            # The reference's batches ran in the worker: no copy was forked.
            assert "model_process" not in meta
    shown = run([ROOT / "report.py", "w.json", "--format", "json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "  harness without: %s" % everything in json.loads(shown.stdout)["header"]


def test_the_default_run_does_what_it_says(tmp_path):
    proc = run_bench(["--workload", "encode", "--items", "60", "--model",
                      "sequential,asyncio-serial", "--no-control", "-o", "d.json"]
                     + TINY_RUNNER, tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "d.json"))
    assert "harness_without" not in suite.get_metadata()
    paired = [one.get_metadata() for bench in suite.get_benchmarks()
              if bench.get_name().endswith("asyncio-serial") for one in bench.get_runs()]
    assert paired and all("probe_s" in meta and "model_process" in meta for meta in paired)


@pytest.mark.quick
def test_prime_and_pinning_are_left_out_when_asked(monkeypatch):
    from concbench.models import parse
    from concbench.run import cell, interventions, partner
    from concbench.workloads.encode import Encode

    primed = []
    for left_out, expected in (("prime,pinning", []), (None, ["sequential"])):
        monkeypatch.setattr(interventions, "_left_out", frozenset())
        interventions.leave_out(left_out)
        model = parse("sequential")
        monkeypatch.setattr(model, "prime", lambda *args, m=model: primed.append(m.name))
        bench = cell.Cell(Encode(items=5), model, "none")
        bench.prepare()
        assert primed == expected
        del primed[:]
    # Left out, the worker of a single-threaded model stays where it is
    # (pinned, this process would keep to one CPU).
    interventions.leave_out("pinning")
    assert partner.pin_worker(parse("sequential")) is None
    interventions.leave_out(None)

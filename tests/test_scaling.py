"""The shape of a worker-count curve (concbench.analysis.scaling): Amdahl's
law and the USL fitted on the rungs at or below the usable CPUs, with
intervals that hold the truth, checked on curves of known shape and on
simulated machines of 16 and 64 CPUs (research.simulation)."""

import itertools
import math
import random

import pytest

from concbench import schema as K
from concbench.analysis import scaling
from concbench.analysis.scaling import fit_series
from concbench.analysis.stats import ratio_of
from concbench.report.verdicts import shape_line
from research.synthetic import usl


class Rung:
    """A settled row of a series as the fit reads it."""

    ours = True

    def __init__(self, count, speedups, gil=False):
        self.count, self.model = count, "processes-%d" % count
        self._speedups = speedups
        self.ratio = ratio_of(speedups)
        self.within_floor = None
        self.meta = {K.PARALLELISM: count, K.INTERPRETERS: 1 if gil else count}

    def workers(self):
        return self.count

    def speedups(self):
        return self._speedups


class Reference:
    model, ratio, meta = "sequential", None, {}

    def workers(self):
        return 1


def series(sigma, kappa, counts, rounds=8, sd=0.01, scale=0.97, seed=1, gil=False):
    rng = random.Random(seed)
    return [Rung(n, {r: scale * usl(n, sigma, kappa) * math.exp(rng.gauss(0, sd))
                     for r in range(rounds)}, gil) for n in counts]


@pytest.mark.quick
def test_the_fit_finds_a_known_peak_and_serial_fraction():
    kappa = 0.98 / 144     # sigma 0.02: the peak at 12
    fit = fit_series(series(0.02, kappa, (1, 2, 4, 8, 16)), 16, Reference())
    assert fit.sigma == pytest.approx(0.02, abs=0.02)
    assert fit.sigma_low <= 0.02 <= fit.sigma_high
    assert fit.peak == pytest.approx(12, rel=0.15)
    assert fit.peak_low <= 12 <= fit.peak_high
    assert fit.baseline == "processes-1" and fit.counts == [1, 2, 4, 8, 16]


@pytest.mark.quick
def test_a_linear_curve_has_no_peak_within_its_rungs():
    fit = fit_series(series(0.0, 0.0, (1, 2, 4, 8, 16, 32, 64)), 64, Reference())
    assert fit.sigma_low <= 0.0 <= fit.sigma_high
    assert not fit.peak_within()
    assert fit.peak_low is None or fit.peak_low > 64
    line = shape_line("processes", "chunk 1", [], fit)
    assert "no peak within 1-64" in line or "peak predicted past 64" in line


@pytest.mark.quick
def test_threads_on_the_gil_read_a_serial_fraction_near_one():
    rows = series(1.0, 0.0, (2, 4, 8), scale=1.0, gil=True)
    fit = fit_series(rows, 8, Reference())
    assert fit.sigma == pytest.approx(1.0, abs=0.05)
    assert fit.baseline == "sequential"     # no one-worker rung
    assert shape_line("threads", "", rows, fit).startswith("threads: serial fraction ")
    assert "(the GIL)" in shape_line("threads", "", rows, fit)


@pytest.mark.quick
def test_no_fit_on_fewer_than_three_rungs_at_or_below_the_cpus():
    """On 2 CPUs the ladder is 1, 2, 4: 4 shares cores and is not fitted."""
    rows = series(0.0, 0.0, (1, 2, 4))
    assert fit_series(rows, 2, Reference()) is None
    assert fit_series(rows, 4, Reference()) is not None
    # Sequential stands in for a missing one-worker rung.
    assert fit_series(series(0.0, 0.0, (2, 4)), 4, Reference()).baseline == "sequential"


@pytest.mark.quick
def test_rungs_beyond_the_cpus_do_not_bend_the_fit():
    """A ladder's 2U rung, slower for sharing cores, is left out: the fit
    of a linear curve stays linear."""
    rows = series(0.0, 0.0, (1, 2, 4, 8))
    slow = Rung(16, {r: 0.97 * 8 * 0.9 for r in range(8)})
    fit = fit_series(rows + [slow], 8, Reference())
    assert 16 not in fit.counts and fit.kappa == pytest.approx(0.0, abs=1e-3)


@pytest.mark.quick
def test_rungs_no_curve_can_pass_through_are_said_so():
    """Speedups that rise, fall and rise again at a 1% spread follow
    neither law: no curve passes through every rung's interval."""
    rows = [Rung(n, {r: x * math.exp(0.001 * (r % 3 - 1)) for r in range(8)})
            for n, x in ((1, 1.0), (2, 1.95), (4, 1.2), (8, 7.5))]
    fit = fit_series(rows, 8, Reference())
    assert not fit.consistent
    assert "follows neither" in shape_line("processes", "", rows, fit)


@pytest.mark.quick
def test_the_polytope_is_the_set_its_vertices_span():
    """Each vertex satisfies every bound, and a point inside (their mean)
    too; a bound no curve can meet gives no set."""
    bounds = [(2, 1.8, 2.0), (4, 3.3, 3.9), (8, 5.0, 6.5)]
    vertices = scaling.polytope(bounds, free_scale=False, with_kappa=True)
    assert vertices
    for vertex in vertices + [tuple(map(lambda *v: sum(v) / len(v), *vertices))]:
        _, sigma, kappa = vertex
        for count, low, high in bounds:
            assert low * (1 - 1e-6) <= usl(count, sigma, kappa) <= high * (1 + 1e-6)
    assert scaling.polytope([(2, 1.99, 2.0), (4, 1.0, 1.01), (8, 7.9, 8.0)],
                            free_scale=False, with_kappa=True) is None


def simulated(world, runs, seed=5):
    """{figure: share} of ``runs`` simulated runs of a world of many CPUs at
    this machine's quiet-day spread (pairs inside a worker spread 0.03)."""
    from research.simulation import Rates, cell_runs, world_budget

    found = Rates(list(itertools.islice(
        cell_runs("pairs", 0.03, seed, world_budget(world, 400.0), world), runs)))
    return dict(found.errors(), **found.curves())


@pytest.mark.parametrize("world", ["cpus-16", "cpus-64"])
def test_many_cpus_answer_the_best_count_in_the_default_budget(world):
    """The default preset's rungs (U, 2U) of a linear curve, one peaking at
    12 and a flat one: the best count answered in 80% of runs or more,
    wrong in 5% at most."""
    found = simulated(world, 60)
    assert found["best counts answered"] >= 0.80, found
    assert found["best count wrong"] <= 0.05 and found["fastest wrong"] <= 0.05, found


@pytest.mark.parametrize("world", ["wide-16", "wide-64"])
def test_the_fits_intervals_hold_the_true_shape(world):
    """Every rung, as the wide preset runs them: the serial fraction and the
    peak in their intervals in 95% of runs or more, and the linear curve
    said to have no peak within the rungs run."""
    found = simulated(world, 60)
    assert found["serial fraction missed"] <= 0.05, found
    assert found["peak missed"] <= 0.05, found
    assert found["no peak said (linear)"] >= 0.95, found


def test_a_fit_that_ignores_the_last_rung_fails_the_check(monkeypatch):
    """The mutation: the fit leaves out its top rung (16 of 1-16). Its peak
    interval then reaches into the rungs run, and the linear curve is no
    longer said to have no peak within them."""
    fitted = scaling.fitted_rungs

    def without_last(rows, cpus, reference):
        found = fitted(rows, cpus, reference)
        return None if found is None else (found[0], found[1][:-1])

    monkeypatch.setattr(scaling, "fitted_rungs", without_last)
    found = simulated("wide-16", 40)
    assert found["no peak said (linear)"] < 0.5, found


def test_a_file_of_three_rungs_on_its_cpus_reads_its_curve(tmp_path):
    """A real run of processes-1, -2 and -4, its file saying it had 4
    usable CPUs (as a 4-CPU machine's would): the takeaway gives the
    series' serial fraction, the JSON its fit, the scaling chart draws it."""
    import json

    from conftest import KEEP, ROOT, replace_values, run, run_bench

    ran = tmp_path / "ran.json"
    proc = run_bench(["--workload", "encode", "--items", "200", "--model",
                      "sequential,processes-1-chunk-50,processes-2-chunk-50,"
                      "processes-4-chunk-50", "--no-control", "-p", "3", "-n", "2", "-w", "0",
                      "--no-latency", "-o", ran], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(ran.read_text())

    replace_values(data, lambda key, value: 4 if key in ("cpus_usable", "cpus_affinity")
                   else KEEP)
    crafted = tmp_path / "four.json"
    crafted.write_text(json.dumps(data))
    report = run([ROOT / "report.py", crafted], tmp_path)
    assert report.returncode == 0, report.stderr
    assert "processes (chunk 50): serial fraction" in report.stdout
    assert "USL on 1-4 against processes-1-chunk-50" in " ".join(report.stdout.split())
    assert "curves: no fit" not in report.stdout
    document = json.loads(run([ROOT / "report.py", crafted, "--format", "json"],
                              tmp_path).stdout)
    curve, = document["workloads"]["encode"]["curves"]
    assert curve["rungs"] == [1, 2, 4] and curve["family"] == "processes"
    plots = tmp_path / "plots"
    assert run([ROOT / "report.py", crafted, "--plot", plots], tmp_path).returncode == 0
    assert (plots / "encode-scaling.png").stat().st_size > 0
    # The same run as it was, on this machine's CPUs: no fit where fewer
    # than three rungs are at or below them.
    if document["header"] and json.loads(ran.read_text())["metadata"]["cpus_usable"] < 4:
        assert "curves: no fit" in run([ROOT / "report.py", ran], tmp_path).stdout


@pytest.mark.quick
def test_a_falling_curve_peaks_at_one_and_its_interval_is_in_order():
    """Speedups that halve at each doubling: the peak is at 1 worker, never
    below, and the interval's ends are in order."""
    rows = [Rung(n, {r: x * math.exp(0.01 * (r % 3 - 1)) for r in range(8)})
            for n, x in ((1, 1.0), (2, 0.5), (4, 0.25))]
    fit = fit_series(rows, 4, Reference())
    assert fit.peak is None or fit.peak >= 1
    if fit.peak_low is not None and fit.peak_high is not None:
        assert 1 <= fit.peak_low <= fit.peak_high


@pytest.mark.quick
def test_a_serial_fraction_beyond_the_fits_range_says_which_side():
    from concbench.report.verdicts import fraction

    assert fraction(1e300) == "above 10" and fraction(-5) == "below -1"
    assert fraction(-0.001) == "0.00" and fraction(0.04) == "0.04"

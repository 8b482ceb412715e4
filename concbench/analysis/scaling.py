"""The shape of a worker-count curve: Amdahl's law and the Universal
Scalability Law (Gunther), fitted to a series' rungs on the machine's cores.

A series' speedup at N workers against its one-worker rung (or the
reference, where it has none) is, under the USL,

    X(N) = N / (1 + sigma (N - 1) + kappa N (N - 1))

with sigma the serial fraction (Amdahl's law is kappa = 0) and kappa the
cost of the workers' crosstalk, which makes the curve peak at
N* = sqrt((1 - sigma) / kappa). N / X - 1 is linear in sigma and kappa, so
the point fit is a least-squares line and needs no optimiser.

The intervals come from the rounds, through the rungs' own: each rung's
speedup interval at level 1 - alpha / k (k rungs: together they hold with
95%), and the set of (scale, sigma, kappa) whose curve passes through all of
them (a rung with no interval yet, too few rounds, bounds nothing). Where
fewer than two rungs above the baseline have one, there are points and no
interval. That set is a polytope (each bound is linear in the three), so the
least and most sigma in it are at its vertices, and so are the least and
most N* ((1 - sigma) / kappa is linear-fractional). Whenever every rung's
truth lies in its interval, the true sigma and N* lie in theirs: the
intervals keep their 95% as the rungs' do, at any stopping time.

Only rungs at or below the usable CPUs are fitted: beyond them workers
share cores, which neither law describes. Fewer than three such rungs is no
fit: two points fix a line through the origin and leave nothing to test.
"""

import itertools
import math

from concbench import schema as K
from concbench.rules import ALPHA
from concbench.analysis.stats import ratio_of

# The least rungs at or below the usable CPUs a fit needs.
LEAST_RUNGS = 3
# The box the polytope is closed in: sigma in [-1, 10] (below 0: better
# than linear, as a worker thread's arena can be; above 1: slower than one
# worker, a pool's own cost), kappa in [0, 10], and the one-worker rung's
# speedup against the reference in [1e-6, 1e6]. A set that reaches the
# box's edge gives no interval: the rungs do not bound it yet.
SIGMA_BOX, KAPPA_BOX, SCALE_BOX = (-1.0, 10.0), (0.0, 10.0), (1e-6, 1e6)
TOLERANCE = 1e-9


class Fit:
    """A series' fit: ``sigma`` (the serial fraction) with [``sigma_low``,
    ``sigma_high``], ``kappa``, the peak ``peak`` (None: no peak, the curve
    rises for ever) with [``peak_low``, ``peak_high``] (``peak_high`` None:
    unbounded), Amdahl's own serial fraction ``amdahl`` [``amdahl_low``,
    ``amdahl_high``], the rungs fitted (``counts``) and the ``baseline``'s
    name. ``consistent`` is False where no USL curve passes through every
    rung's interval: the series does not follow the law."""

    def __init__(self, counts, baseline):
        self.counts, self.baseline = counts, baseline
        self.sigma = self.sigma_low = self.sigma_high = None
        self.kappa = None
        self.peak = self.peak_low = self.peak_high = None
        self.amdahl = self.amdahl_low = self.amdahl_high = None
        self.consistent = True
        # Whether some curve of Amdahl's law (kappa 0) passes through every
        # rung's interval.
        self.amdahl_fits = True
        # The baseline's speedup against the reference (1 where it is the
        # reference): what turns the curve into the chart's speedups.
        self.scale = 1.0

    def predicted(self, count):
        """The fitted curve's speedup against the reference at ``count``."""
        return self.scale * count / (1 + self.sigma * (count - 1)
                                     + self.kappa * count * (count - 1))

    @property
    def top(self):
        return max(self.counts)

    def peak_within(self):
        """Whether the fit places the peak within the rungs it ran: its
        interval's upper end at or below the top rung."""
        return self.peak_high is not None and self.peak_high <= self.top

    def record(self):
        return {"rungs": list(self.counts), "baseline": self.baseline,
                "baseline_speedup": self.scale,
                "serial_fraction": self.sigma, "serial_fraction_ci_low": self.sigma_low,
                "serial_fraction_ci_high": self.sigma_high, "kappa": self.kappa,
                "peak": self.peak, "peak_ci_low": self.peak_low,
                "peak_ci_high": self.peak_high, "amdahl_serial_fraction": self.amdahl,
                "amdahl_ci_low": self.amdahl_low, "amdahl_ci_high": self.amdahl_high,
                "follows_usl": self.consistent}


def fitted_rungs(series, cpus, reference):
    """(baseline name, [(N, row)]) of the rungs a fit reads, or None where
    there are fewer than LEAST_RUNGS at or below ``cpus``: the series'
    rows (one per worker count), and the one-worker rung as baseline, else
    the ``reference`` row (whose speedup is 1) as N = 1."""
    by_count = {}
    # A standard-library default (``-default``) runs as the same count
    # named outright: one row a count, the named one where both ran.
    for row in sorted(series, key=lambda r: K.STDLIB_DEFAULT in r.meta):
        count = row.workers()
        if type(count) is int and 1 <= count <= (cpus or 0):
            by_count.setdefault(count, row)
    rungs = sorted(by_count.items(), key=lambda pair: pair[0])
    if 1 not in by_count:
        if reference is None:
            return None
        rungs = [(1, reference)] + rungs
    if len(rungs) < LEAST_RUNGS:
        return None
    return rungs[0][1].model, rungs


def fit_series(series, cpus, reference, alpha=ALPHA):
    """The Fit of one series (rows of one family and chunk size, whose
    speedups are settled), or None where it has too few rungs on the
    usable ``cpus`` or a rung has no speedup yet."""
    found = fitted_rungs(series, cpus, reference)
    if found is None:
        return None
    baseline, rungs = found
    free_scale = rungs[0][1] is not reference
    bounds, points = [], {}
    share = alpha / (len(rungs) if free_scale else len(rungs) - 1)
    for count, row in rungs:
        if row is reference:
            points[count] = 1.0
            continue
        speedups = row.speedups() or {}
        whole = row.ratio
        if whole is None or not speedups or not 0 < whole.point < math.inf:
            return None
        points[count] = whole.point
        ratio = ratio_of(speedups, share, floor=getattr(row, "within_floor", None))
        # A rung without an interval yet bounds nothing: the set is only
        # wider for it, and still holds the truth.
        if ratio is not None and ratio.low is not None:
            bounds.append((count, ratio.low, ratio.high))
    fit = Fit([count for count, _ in rungs], baseline)
    fit.scale = points[1]
    relative = {count: point / points[1] for count, point in points.items()}
    fit.sigma, fit.kappa = least_squares(relative)
    fit.amdahl = least_squares_amdahl(relative)
    fit.peak = peak_of(fit.sigma, fit.kappa)
    if sum(1 for count, _, _ in bounds if count > 1) < 2:
        return fit      # too few rungs with an interval yet: the points alone
    usl = polytope(bounds, free_scale, with_kappa=True)
    if usl is None:
        fit.consistent = False
        return fit
    if any(on_edge(vertex) for vertex in usl):
        return fit      # the rungs' intervals do not bound it yet
    if not inside((fit.scale, fit.sigma, fit.kappa), bounds, free_scale):
        # The point fit misses a rung's interval: the set's middle instead.
        fit.scale, fit.sigma, fit.kappa = (sum(v[axis] for v in usl) / len(usl)
                                           for axis in range(3))
        fit.peak = peak_of(fit.sigma, fit.kappa)
    fit.sigma_low, fit.sigma_high = extent(usl, 1)
    fit.peak_low, fit.peak_high = peak_extent(usl)
    amdahl = polytope(bounds, free_scale, with_kappa=False)
    fit.amdahl_fits = amdahl is not None
    if amdahl is not None and not any(on_edge(vertex) for vertex in amdahl):
        fit.amdahl_low, fit.amdahl_high = extent(amdahl, 1)
        fit.amdahl = min(max(fit.amdahl, fit.amdahl_low), fit.amdahl_high)
    return fit


def on_edge(vertex):
    """Whether a vertex lies on the box's edge (but kappa's floor of 0,
    which is the law's own): there the rungs do not bound the set."""
    scale, sigma, kappa = vertex
    return (abs(sigma - SIGMA_BOX[0]) < 1e-6 or abs(sigma - SIGMA_BOX[1]) < 1e-6
            or abs(kappa - KAPPA_BOX[1]) < 1e-6
            or scale <= SCALE_BOX[0] * (1 + 1e-6) or scale >= SCALE_BOX[1] * (1 - 1e-6))


def inside(point, bounds, free_scale):
    """Whether ``point`` (scale, sigma, kappa) passes through every rung's
    interval (its scale 1 where the baseline is the reference)."""
    scale, sigma, kappa = point
    if not free_scale:
        scale = 1.0
    for count, low, high in bounds:
        value = scale * count / (1 + sigma * (count - 1) + kappa * count * (count - 1)) \
            if 1 + sigma * (count - 1) + kappa * count * (count - 1) > 0 else math.inf
        if not low * (1 - 1e-9) <= value <= high * (1 + 1e-9):
            return False
    return kappa >= 0


def least_squares(relative):
    """(sigma, kappa) of the line N / X - 1 = sigma (N - 1) + kappa N (N - 1)
    through the rungs ``relative`` ({N: X}); kappa is never below 0 (a
    curve that bends up is Amdahl's with a smaller fraction)."""
    rows = [(count - 1, count * (count - 1), count / x - 1)
            for count, x in relative.items() if count > 1 and x > 0]
    saa = sum(a * a for a, _, _ in rows)
    sab = sum(a * b for a, b, _ in rows)
    sbb = sum(b * b for _, b, _ in rows)
    say = sum(a * y for a, _, y in rows)
    sby = sum(b * y for _, b, y in rows)
    determinant = saa * sbb - sab * sab
    if determinant > 1e-12 * saa * sbb:
        sigma = (say * sbb - sby * sab) / determinant
        kappa = (saa * sby - sab * say) / determinant
        if kappa >= 0:
            return sigma, kappa
    return (say / saa if saa else 0.0), 0.0


def least_squares_amdahl(relative):
    rows = [(count - 1, count / x - 1) for count, x in relative.items() if count > 1 and x > 0]
    saa = sum(a * a for a, _ in rows)
    return sum(a * y for a, y in rows) / saa if saa else 0.0


def peak_of(sigma, kappa):
    """N* = sqrt((1 - sigma) / kappa); None without crosstalk (no peak)."""
    if kappa is None or kappa <= 0:
        return None
    return max(1.0, math.sqrt(max(1.0 - sigma, 0.0) / kappa))


def polytope(bounds, free_scale, with_kappa):
    """The vertices of the set of (scale, sigma, kappa) whose curve
    scale x X(N) lies in every rung's [low, high] (``bounds``: (N, low,
    high)); scale is 1 where the baseline is the reference, kappa 0 for
    Amdahl's law. None where the set is empty."""
    # Each constraint: (coefficients of (scale, sigma, kappa), bound): c . v <= b.
    constraints = []
    for count, low, high in bounds:
        grow = (count - 1, count * (count - 1))
        constraints.append(((count / high, -grow[0], -grow[1]), 1.0))
        constraints.append(((-count / low, grow[0], grow[1]), -1.0))
    boxes = [(0, SCALE_BOX), (1, SIGMA_BOX), (2, KAPPA_BOX)]
    for axis, (low, high) in boxes:
        unit = [0.0, 0.0, 0.0]
        unit[axis] = 1.0
        constraints.append((tuple(unit), high))
        constraints.append((tuple(-u for u in unit), -low))
    fixed = {}
    if not free_scale:
        fixed[0] = 1.0
    if not with_kappa:
        fixed[2] = 0.0
    free = [axis for axis in range(3) if axis not in fixed]
    reduced = []
    for coefficients, bound in constraints:
        rest = bound - sum(coefficients[axis] * value for axis, value in fixed.items())
        kept = tuple(coefficients[axis] for axis in free)
        if not any(kept):
            if rest < -TOLERANCE:
                return None
            continue
        reduced.append((kept, rest))
    vertices = []
    for chosen in itertools.combinations(reduced, len(free)):
        point = solve([c for c, _ in chosen], [b for _, b in chosen])
        if point is None:
            continue
        if all(sum(c * x for c, x in zip(coefficients, point)) <= bound + TOLERANCE
               * max(1.0, abs(bound)) for coefficients, bound in reduced):
            full = [fixed.get(axis) for axis in range(3)]
            for axis, value in zip(free, point):
                full[axis] = value
            vertices.append(tuple(full))
    return vertices or None


def solve(matrix, vector):
    """The solution of a 1x1, 2x2 or 3x3 system, None where it is singular."""
    size = len(vector)
    rows = [list(matrix[i]) + [vector[i]] for i in range(size)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        if abs(rows[pivot][column]) < 1e-12:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for other in range(size):
            if other != column:
                factor = rows[other][column] / rows[column][column]
                rows[other] = [a - factor * b for a, b in zip(rows[other], rows[column])]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def extent(vertices, axis):
    values = [vertex[axis] for vertex in vertices]
    return min(values), max(values)


def peak_extent(vertices):
    """(least, most) N* over the polytope; most None where a curve of no
    crosstalk (kappa 0) is in it: then the peak may lie anywhere beyond."""
    ratios = [max(1.0 - sigma, 0.0) / kappa for _, sigma, kappa in vertices if kappa > 1e-12]
    unbounded = any(kappa <= 1e-12 for _, _, kappa in vertices)
    low = max(1.0, math.sqrt(min(ratios))) if ratios else None
    high = None if unbounded or not ratios else max(low, math.sqrt(max(ratios)))
    return low, high


def family_fits(members, cpus, reference):
    """[(series label, its rows, Fit)] of the series of one family's rows
    (``members``, settled) that have enough rungs on ``cpus``."""
    from concbench.analysis.questions import series_of

    found = []
    for label, series in series_of(members):
        fit = fit_series(series, cpus, reference)
        if fit is not None:
            found.append((label, series, fit))
    return found


def on_gil(series):
    """Whether a series' workers share one GIL: threads of a GIL build."""
    shared = [row for row in series if (row.workers() or 1) > 1]
    return bool(shared) and all(row.meta.get(K.INTERPRETERS) == 1
                                and row.meta.get(K.GIL) != "disabled" for row in shared)

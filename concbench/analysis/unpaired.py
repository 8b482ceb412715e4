"""The unpaired comparison of two files (two machines or versions): they
are compared once, when both are done, with the two-sample Student interval
that pyperf's compare_to applies."""

import functools
import math
import statistics

from concbench import schema as K
from concbench.analysis.stats import UNBOUNDED_LOG, Ratio
from concbench.rules import ALPHA

# A row of two files measures the same thing only if these agree: the
# workload's parameters, and for http the server and the Python it ran on.
SAME_IN_A_COMPARISON = ((K.WORKLOAD_PARAMS, "workload parameters"),
                        (K.HTTP_SERVER, "server"),
                        (K.HTTP_SERVER_PYTHON, "server's Python"))


def t_within(t, df):
    """P(|T| < t) for Student's T of ``df`` (a whole number >= 1) degrees
    of freedom, from its exact finite series (Abramowitz & Stegun 26.7.3
    and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:
        term = total = 1.0 if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    term = total = 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        total += term
    return math.sin(theta) * total


@functools.lru_cache(maxsize=1024)
def t_critical(df, alpha=ALPHA):
    """The two-sided critical value of Student's t at level 1 - ``alpha``
    for ``df`` degrees of freedom (a whole number >= 1): the t with
    P(|T| < t) = 1 - alpha, by bisection to 1e-9."""
    low, high = 0.0, 1.0
    while t_within(high, df) < 1 - alpha:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_within(middle, df) < 1 - alpha:
            low = middle
        else:
            high = middle
        if high - low < 1e-9 * high:
            break
    return high


def unpaired_ratio(numerator, denominator):
    """mean(numerator) / mean(denominator) of two independent samples (two
    files: two machines or versions), geometric, with a 95% interval on the
    difference of mean logarithms (Welch's standard error, the smaller
    sample's degrees of freedom: conservative). None if a sample is empty."""
    numerator = [x for x in numerator if x > 0]
    denominator = [x for x in denominator if x > 0]
    if not numerator or not denominator:
        return None
    logs1 = [math.log(x) for x in numerator]
    logs2 = [math.log(x) for x in denominator]
    diff = statistics.fmean(logs1) - statistics.fmean(logs2)
    if len(logs1) < 2 or len(logs2) < 2:
        return Ratio(math.exp(diff), None, None, 0, 0)
    error = math.sqrt(statistics.variance(logs1) / len(logs1)
                      + statistics.variance(logs2) / len(logs2))
    return difference_ratio(diff, error, min(len(logs1), len(logs2)) - 1)


def difference_ratio(diff, error, df, alpha=ALPHA, rounds=0):
    """The Ratio exp(``diff``) of a difference of two independent samples'
    mean logarithms, with its two-sided Student interval at level 1 -
    ``alpha`` from its standard ``error`` and ``df`` degrees of freedom
    (none where the half-width passes what a float can hold)."""
    half = t_critical(max(1, int(df)), alpha) * error
    if not half < UNBOUNDED_LOG:
        return Ratio(math.exp(diff), None, None, 0, 0)
    return Ratio(math.exp(diff), math.exp(diff - half), math.exp(diff + half), 0, rounds)


def not_comparable(row, ref):
    """What differs between two files' rows that must not ("" if nothing)."""
    differ = [label for key, label in SAME_IN_A_COMPARISON
              if row.meta.get(key) != ref.meta.get(key)]
    # A row run on a user's Dask cluster: the same cluster's shape, its
    # workers and their threads (its address may change as it restarts).
    here, there = getattr(row, "elsewhere", False), getattr(ref, "elsewhere", False)
    if (here or there) and (here != there or any(
            row.meta.get(key) != ref.meta.get(key) for key in (K.INTERPRETERS, K.PARALLELISM))):
        differ.append("Dask clusters (workers and threads)")
    # pyperf's unit of the values (seconds unless a file says bytes).
    if getattr(row, "unit", "second") != getattr(ref, "unit", "second"):
        differ.append("units")
    return "different " + " and ".join(differ) if differ else ""

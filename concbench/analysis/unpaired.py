"""The unpaired comparison of two files (two machines or versions): they
are compared once, when both are done, with the two-sample Student interval
that pyperf's compare_to applies."""

import math
import statistics

from concbench.analysis.stats import Ratio

# Two-tailed 95% critical values of Student's t for 1 to 30 degrees of
# freedom, then a few steps towards the normal distribution's 1.96.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_T95_LARGE = ((200, 1.960), (100, 1.984), (80, 1.990), (60, 2.000), (50, 2.009),
              (40, 2.021))


def t_critical_95(df):
    for least, value in _T95_LARGE:
        if df >= least:
            return value
    return _T95[min(df, len(_T95)) - 1]


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
    half = t_critical_95(min(len(logs1), len(logs2)) - 1) * error
    return Ratio(math.exp(diff), math.exp(diff - half), math.exp(diff + half), 0, 0)

"""Significance of a difference between two samples of values.

The two-sample, two-tailed Student's t-test at 95% that pyperf's compare_to
applies, written here because pyperf does not export it.
"""

import math
import statistics

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


def is_significant(sample1, sample2):
    """True if the means differ at 95%; None with fewer than 2 values each."""
    n1, n2 = len(sample1), len(sample2)
    if n1 < 2 or n2 < 2:
        return None
    if statistics.pstdev(sample1) == 0 and statistics.pstdev(sample2) == 0:
        return sample1[0] != sample2[0]
    df = n1 + n2 - 2
    mean1, mean2 = statistics.fmean(sample1), statistics.fmean(sample2)
    pooled = (math.fsum((x - mean1) ** 2 for x in sample1)
              + math.fsum((x - mean2) ** 2 for x in sample2)) / df
    t_score = (mean1 - mean2) / math.sqrt(pooled * (1 / n1 + 1 / n2))
    return abs(t_score) >= t_critical_95(df)

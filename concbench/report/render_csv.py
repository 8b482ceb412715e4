"""The document as CSV: raw numbers (seconds, bytes), one line per row of a
table (one file) or per benchmark and file (a comparison)."""

import csv
import io

from concbench import schema as K

from .document import column_keys, is_comparison

COMPARISON_KEYS = ("mean_s", "stdev_s", "time_ratio", "time_ci_low", "time_ci_high",
                   "time_significant", "mem_peak_bytes", "mem_peak_source", "mem_change_pct",
                   "mem_significant", "not_comparable", "mem_not_comparable")


def render(document):
    if is_comparison(document):
        header = ("benchmark", "file") + COMPARISON_KEYS
        lines = ([record["benchmark"], entry["file"]] + [entry.get(k) for k in COMPARISON_KEYS]
                 for record in document["benchmarks"] for entry in record["files"])
    else:
        keys = column_keys()
        header = [K.WORKLOAD] + keys
        lines = ([name] + [row[k] for k in keys]
                 for name, entry in document["workloads"].items() for row in entry["rows"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for line in lines:
        writer.writerow(["" if value is None else value for value in line])
    return out.getvalue().rstrip("\n")

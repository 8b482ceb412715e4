"""Add to a bench.py JSON file the facts that bench.py now records itself.

The files here were written before models stated their concurrency,
parallelism, interpreters and item side, and before each benchmark named
its reference model and its workload's reported parameters. This adds
exactly what the current bench.py would write for the same benchmarks,
derived from the model's name and the workload's parameters by the same
code, and changes no measured value, so that the report's golden output
shows the report unchanged on the same measurements.

    python tests/data/add_model_facts.py tests/data/small.json
"""

import json
import sys

from concbench import models, workloads


def upgrade(path):
    with open(path) as f:
        data = json.load(f)
    for bench in data["benchmarks"]:
        meta = bench["metadata"]
        # pyperf keeps what every benchmark shares at the file's level.
        merged = dict(data["metadata"], **meta)
        if "workload" not in merged:
            continue
        model = models.parse(merged["model"])
        added = {key: value for key, value in model.metadata().items()
                 if key not in merged}
        added["reference_model"] = models.reference_name()
        merged.update(added)
        for run in bench["runs"]:
            merged.update((k, v) for k, v in run.get("metadata", {}).items()
                          if k not in merged)
        workload = workloads.get(merged["workload"])
        added["workload_params"] = workload.reported(merged)
        meta.update(added)
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        upgrade(name)

"""What one benchmark's first timed batch sets up for good, run in an
interpreter of its own (tests/test_workloads_models.py, test_http.py,
test_db.py): a module the model's run imports, a process it starts that
outlives the batch. Both are on the first batch's clock and on no later
batch's.

    python first_batch.py WORKLOAD MODEL PARAMS_JSON
    ->  {"modules": [...], "processes": [command lines]}
"""

import json
import sys

import psutil

from concbench import models, workloads
from concbench.run.batch import run_batch
from concbench.run.cell import Cell

if __name__ == "__main__":
    workload_name, model_name, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    bench = Cell(workloads.get(workload_name)(**params), models.parse(model_name),
                  pairing="none")
    prepared = bench.prepare()
    me = psutil.Process()
    seen = {}
    run = bench.model.run

    def timed_run(*args, **kwargs):
        """The model's run, as the batch's clock times it."""
        modules, children = set(sys.modules), set(me.children(recursive=True))
        try:
            return run(*args, **kwargs)
        finally:
            seen["modules"] = sorted(set(sys.modules) - modules)
            seen["processes"] = sorted(set(me.children(recursive=True)) - children,
                                       key=lambda child: child.pid)

    bench.model.run = timed_run
    run_batch(bench, prepared)
    started = []
    for child in seen["processes"]:
        try:
            if child.is_running():
                started.append(" ".join(child.cmdline()))
        except psutil.NoSuchProcess:    # a pool's process on its way out
            pass
    print(json.dumps({"modules": seen["modules"], "processes": started}))

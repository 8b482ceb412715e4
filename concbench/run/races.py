"""A race's comparisons: two models of a workload in one worker.

A race between two rows paired in their worker compares their speedups,
each against the reference beside it. The reference runs on one CPU, and a
model that uses both carries the other CPU's speed in its speedup: two such
models paired with each other in one worker see the same machine
(docs/figures.md, "A race paired in one worker"). The rounds bench.py adds
for a race (``concbench.run.allocation``) may run such a pair. It is not a
row: it has an index beyond the matrix's, the same in the master and in
every worker, and is built where it runs.
"""

from concbench.run.cell import Bench
from concbench.run.matrix import CONTROL


def can_race(bench):
    """Whether ``bench`` may be one side of a race's comparison in one
    worker: a model paired in its worker, neither the reference nor the
    control."""
    return (bench.pairing == "worker" and not bench.overhead and not bench.against
            and bench.model.name not in (bench.reference, CONTROL))


def cell(matrix, index):
    """The benchmark at ``index``: the matrix's own, or beyond it the
    comparison of model i against model j (index = n + i * n + j)."""
    count = len(matrix)
    if index < count:
        return matrix[index]
    i, j = divmod(index - count, count)
    one, other = matrix[i], matrix[j]
    if i == j or one.workload is not other.workload or not (can_race(one) and can_race(other)):
        raise IndexError("no race comparison at index %d" % index)
    return Bench(one.workload, one.model, "worker", record=one.record,
                 reference=one.reference, against=other.model.name)


def race_index(matrix, name):
    """The index of the comparison named ``<workload>/<model> vs <other>``,
    None if the matrix has no such pair."""
    row, sep, other = name.partition(" vs ")
    if not sep:
        return None
    count = len(matrix)
    found = {bench.name: i for i, bench in enumerate(matrix)}
    i = found.get(row)
    if i is None:
        return None
    j = next((j for j, bench in enumerate(matrix) if bench.workload is matrix[i].workload
              and bench.model.name == other), None)
    if j is None or i == j or not (can_race(matrix[i]) and can_race(matrix[j])):
        return None
    return count + i * count + j

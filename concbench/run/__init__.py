"""bench.py, step by step: ``cli`` (checks, then the run) -> ``plan`` (rounds
and budget) -> ``matrix`` (the benchmarks) -> ``master`` (the rounds, each a
pyperf worker per benchmark) -> ``worker`` (a worker's values) -> ``batch``
(one timed, checked batch) beside its ``partner`` -> ``record`` (each run's
figures) -> ``results`` (the file). What is still open after a round is the
analysis package's (``concbench.analysis.questions``), as the report reads it."""

"""Per-run figures in the pyperf JSON, through pyperf's hook mechanism.

pyperf creates a hook instance for the warm-up phase and another for the
values phase of each worker process and calls ``teardown(metadata)`` at the
end of each; the values phase comes last, so the run's metadata describes
the timed values, not the warm-ups. The timed function (bench.py) adds each
checked batch's figures with ``record()``.
"""

_run = {}


def record(figures):
    """Add one batch's figures (counts and seconds) to the current run."""
    for key, value in figures.items():
        _run[key] = _run.get(key, 0) + value


class RunFigures:
    """The ``concbench`` pyperf hook (entry point group ``pyperf.hook``)."""

    def __init__(self):
        _run.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None

    def teardown(self, metadata):
        figures = dict(_run)
        timed = figures.pop("timed_seconds", 0.0)
        for key, value in figures.items():
            metadata[key] = round(value, 6) if isinstance(value, float) else value
        if "server_cpu" in figures and timed > 0:
            # The share of the batches' wall time the server spent on CPU.
            metadata["server_busy"] = round(figures["server_cpu"] / timed, 4)

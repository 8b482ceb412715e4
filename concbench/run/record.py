"""The pyperf hook's old import path (``concbench.run.record:RunFigures``),
kept for installs whose entry points still name it: everything moved to
``concbench.run.run_figures``."""

from concbench.run.run_figures import *  # noqa: F401,F403

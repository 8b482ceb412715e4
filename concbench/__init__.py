"""concurrency-bench: a pyperf benchmark of Python's concurrency models.

The library behind ``bench.py`` and ``report.py``. Its subpackages
``concbench.workloads``, ``concbench.models`` and ``concbench.servers`` are
the folders ``workloads/``, ``models/`` and ``servers/`` at the top of the
checkout, where a reader looks for them first; an installed wheel holds them
inside this package (pyproject.toml maps them). In a checkout, the top
folder is added to this package's search path so that the mapping holds
however the code is run: from an editable install, or from a copy of the
checkout that was never installed.
"""

import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
_top = _os.path.dirname(_here)
if (not _os.path.isdir(_os.path.join(_here, "workloads"))
        and _os.path.isfile(_os.path.join(_top, "workloads", "__init__.py"))):
    __path__.append(_top)

#: The folder from which ``import concbench`` works: what a child process
#: that imports the package by name (the sampler, the load server) needs on
#: its PYTHONPATH to run this very copy of the code.
IMPORT_ROOT = _top

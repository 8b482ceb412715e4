"""The launchers' first step: find the project's environment, or say how.

bench.py and report.py run from a clone with whatever ``python3`` is on
PATH. Without the pinned dependencies they re-execute themselves with the
checkout's ``.venv`` (made by ``make venv``) when it exists, and otherwise
print one line with the command to run. Standard library only.
"""

import importlib.util
import os
import sys

NEEDED = ("pyperf", "psutil", "tabulate")


def ensure_environment(prog, script):
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if not missing:
        return
    root = os.path.dirname(os.path.abspath(script))
    venv = os.path.join(root, ".venv")
    python = os.path.join(venv, "bin", "python")
    # The same environment is the same prefix (the interpreters of two
    # virtual environments are often links to one binary).
    if (os.path.exists(python) and not os.environ.get("CONCBENCH_REEXEC")
            and os.path.realpath(sys.prefix) != os.path.realpath(venv)):
        os.environ["CONCBENCH_REEXEC"] = "1"     # once: never a loop
        os.execv(python, [python, os.path.abspath(script)] + sys.argv[1:])
    print("%s: error: %s %s not installed for %s; run `make venv` in %s, then "
          "run it again (or `make bench` for the default suite and its report)"
          % (prog, ", ".join(missing), "is" if len(missing) == 1 else "are",
             sys.executable, root), file=sys.stderr)
    sys.exit(2)

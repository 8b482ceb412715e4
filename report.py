#!/usr/bin/env python3
"""Tables, charts and a shareable page from bench.py's pyperf JSON files.

    ./report.py data.json
    ./report.py py311.json py313.json --format markdown
    ./report.py data.json --workload rotate --sort time --plot plots/
    ./report.py data.json --html report.html

The code is in ``concbench.report``.
"""

import sys

from concbench.run.launch import ensure_environment

ensure_environment("report.py", __file__)   # or re-run with .venv's Python

from concbench.report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

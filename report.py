#!/usr/bin/env python3
"""Tables and plots from bench.py's pyperf JSON files.

    ./report.py data.json
    ./report.py py311.json py313.json --format markdown
    ./report.py data.json --workload rotate --sort time --plot plots/

The code is in ``concbench.report``.
"""

import sys

from concbench.report import main

if __name__ == "__main__":
    sys.exit(main())

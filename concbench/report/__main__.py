import sys

from concbench.report import main

sys.exit(main())

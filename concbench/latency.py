"""The item latency recorder's old import path, kept for plugins that
import it: everything moved to ``concbench.item_stamps``."""

from concbench.item_stamps import *  # noqa: F401,F403

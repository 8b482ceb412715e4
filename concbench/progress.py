"""The progress line of bench.py's master: one per benchmark, with an estimate."""

import sys
import time


def format_duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % divmod(seconds, 60)


class Progress:
    def __init__(self, total):
        self.total = total
        self.start = time.monotonic()

    def show(self, index, name):
        elapsed = time.monotonic() - self.start
        if index:
            remaining = elapsed / index * (self.total - index)
            eta = ", about %s left" % format_duration(remaining)
        else:
            eta = ""
        print("[%d/%d] %s (elapsed %s%s)"
              % (index + 1, self.total, name, format_duration(elapsed), eta),
              file=sys.stderr, flush=True)

"""Item latencies, in a histogram of buckets 1% wide (HdrHistogram's idea;
its package has no wheels for free-threaded builds, and its C extension would
turn the GIL back on there): any percentile within 0.5% of the truth,
however many items, and the largest kept exactly.
"""

import math

# Buckets: [FLOOR * RATIO**i, FLOOR * RATIO**(i + 1)).
FLOOR = 1e-7
RATIO = 1.01
_LOG_RATIO = math.log(RATIO)


class Histogram:
    """Counts of latencies in buckets 1% wide, and the largest exactly."""

    def __init__(self, counts=None, largest=0.0):
        self.counts = dict(counts or {})
        self.largest = largest

    @property
    def total(self):
        return sum(self.counts.values())

    def add(self, seconds):
        index = bucket(seconds)
        self.counts[index] = self.counts.get(index, 0) + 1
        if seconds > self.largest:
            self.largest = seconds

    def merge(self, other):
        for index, count in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + count
        self.largest = max(self.largest, other.largest)
        return self

    def percentile(self, share):
        """The latency below which ``share`` (0 to 100) of the items fall:
        the middle of its bucket; the largest itself at 100."""
        total = self.total
        if not total:
            return None
        if share >= 100:
            return self.largest
        rank = max(1, math.ceil(share / 100.0 * total))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                return min(self.largest, FLOOR * RATIO ** (index + 0.5))
        return self.largest

    def encode(self):
        """'largest;index:count,...' (what a run's metadata keeps)."""
        return "%r;%s" % (self.largest, ",".join(
            "%d:%d" % (index, count) for index, count in sorted(self.counts.items())))

    @classmethod
    def decode(cls, text):
        """The histogram ``encode`` wrote; ValueError if it is not one."""
        largest, _, pairs = text.partition(";")
        counts = {}
        for pair in filter(None, pairs.split(",")):
            index, count = pair.split(":")
            counts[int(index)] = int(count)
        return cls(counts, float(largest))


def bucket(seconds):
    return int(math.floor(math.log(max(seconds, FLOOR) / FLOOR) / _LOG_RATIO))


def histogram_of(latencies):
    found = Histogram()
    for seconds in latencies:
        found.add(seconds)
    return found

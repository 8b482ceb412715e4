"""bench.py master's console: a line per round, one per finished benchmark
with its median and spread, progress with an estimate, and one summary of
unstable results at the end in place of pyperf's per-benchmark warnings."""

import statistics
import sys
import time

from concbench.thresholds import unstable_reasons
from concbench.formatting import count, format_time, wrapped

# The command's name in its messages: "concbench run" when run as that.
PROG = "bench.py"


def fail(message, status=2):
    """Bad input or a check that failed: one line on stderr, then exit."""
    print("%s: error: %s" % (PROG, message), file=sys.stderr)
    sys.exit(status)


def format_duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % divmod(seconds, 60)


def say(line):
    """A line of the run's console, wrapped within 120 columns."""
    print("\n".join(wrapped(line)), file=sys.stderr, flush=True)


class Progress:
    """Tasks done against tasks planned; benchmarks finished against all."""

    def __init__(self, tasks, benchmarks):
        self.tasks = tasks
        self.benchmarks = benchmarks
        self.done = 0
        self.finished = 0
        self.start = time.monotonic()
        self.values = {}

    def left(self):
        if not self.done:
            return ""
        elapsed = time.monotonic() - self.start
        return ", about %s left" % format_duration(
            elapsed / self.done * (self.tasks - self.done))

    def round_starts(self, number, rounds):
        say("round %d/%d (elapsed %s%s)" % (
            number + 1, rounds, format_duration(time.monotonic() - self.start),
            self.left()))

    def task_done(self, bench, last):
        """Count a task of ``bench`` (a filed pyperf Benchmark); ``last``:
        the benchmark has no task left, so say its figures."""
        self.done += 1
        values = self.values.setdefault(bench.get_name(), [])
        values.extend(statistics.median(run.values) for run in bench.get_runs()
                      if run.values)
        if not last:
            return
        self.finished += 1
        spread = ("%s-%s over %d runs" % (format_time(min(values)),
                                         format_time(max(values)), len(values))
                  if len(values) > 1 else "1 run")
        say("[%d/%d] %s: %s (%s)%s" % (
            self.finished, self.benchmarks, bench.get_name(),
            format_time(statistics.median(values)), spread, self.left()))


def unstable_summary(suite):
    """One paragraph for the whole run, or None: what pyperf would warn about
    benchmark by benchmark, and what to do."""
    if suite is None:
        return None
    shaky = []
    for bench in suite.get_benchmarks():
        runs = [run for run in bench.get_runs() if run.values]
        values = [value for run in runs for value in run.values]
        raw = [value * run.get_total_loops() for run in runs for value in run.values]
        if unstable_reasons(values, raw):
            shaky.append(bench.get_name())
    if not shaky:
        return None
    shown = ", ".join(shaky[:8]) + (", ..." if len(shaky) > 8 else "")
    return ("%d of %d benchmarks may be unstable (values spread by 10%% or more, "
            "or outliers): %s. The report's intervals say which differences "
            "hold; more rounds (-p) narrow them, 'python -m pyperf system "
            "tune' lowers the noise, and -v shows pyperf's own warnings."
            % (len(shaky), len(suite.get_benchmarks()), shown))


def changes(before, now, rounds, elapsed):
    """What the console says of the takeaways after a round: those answered
    since the last reading, and those said answered before that are open
    again (a race whose leader changed as its rows gained rounds), so that
    no answer the console gave stands once the file no longer holds it."""
    when = "after %s (%s)" % (count(rounds, "rounds"), format_duration(elapsed))
    lines = []
    if now - before:
        lines.append("answered %s: %s" % (when, "; ".join(sorted(now - before))))
    if before - now:
        lines.append("open again %s: %s" % (when, "; ".join(sorted(before - now))))
    return lines

"""The memory sampler: a process that watches a pyperf worker's process tree.

``python -m concbench.run.memory_sampler --sample PID`` answers each ``start`` and
``stop`` line on stdin with one line of figures (method, memory, threads,
processes, samples) about PID and all its descendants, sampled in between.
It is a process of its own so that sampling never competes for the GIL with
the threads being measured. It sums PSS over the tree: PSS splits each
shared page between the processes sharing it, so forked pool workers are not
counted several times for the pages they share, as summed RSS would.
"""

import os
import select
import sys
import time

from concbench.run.tree_memory import TreeMemory, choose_method, sample_tree_psutil

ANSWER = ("method", "memory", "threads", "processes", "samples", "lost",
          "voluntary", "involuntary")


def format_answer(method, figures, samples, missed, reaped):
    """figures: (memory, threads, processes); reaped: context switches
    (voluntary, involuntary) of processes a descendant reaped."""
    return " ".join([method] + ["%d" % value for value in (
        tuple(figures) + (samples, missed) + tuple(reaped))]) + "\n"


def parse_answer(line):
    fields = dict(zip(ANSWER, line.split()))
    answer = {name: int(fields[name]) for name in ANSWER[1:6]}
    answer["method"] = fields["method"]
    answer["reaped_switches"] = (int(fields["voluntary"]), int(fields["involuntary"]))
    return answer


def sampler_main(root, partner=None, between=True):
    """Answer each 'start' and 'stop' line with one line of figures.

    Between a start and a stop, sample every 5 ms for the first 50 ms (short
    batches), then every 10 ms (20 ms where only psutil is available); the
    start and stop samples read PSS in full. Not ``between`` (bench.py
    --without sampler): only those two. The stop line ends with the
    number of processes seen that the worker's CPU counters may have missed
    (always 0 where only psutil is available: it cannot tell), then the
    context switches of processes reaped outside the worker's reach.
    """
    method = choose_method(root)
    exclude = {os.getpid()} | ({partner} if partner else set())
    if method == "pss":
        tree = TreeMemory(root, exclude, partner)
        sample, interval = tree.sample, 0.01
        begin, lost, switches = tree.begin, tree.lost, tree.reaped_switches
    else:
        def sample(force=False):
            return sample_tree_psutil(root, exclude, method)
        interval = 0.02
        begin, lost, switches = (lambda: None), (lambda: 0), (lambda: (0, 0))
    stdin = sys.stdin

    def reply(figures, samples, missed=0, reaped=(0, 0)):
        sys.stdout.write(format_answer(method, figures, samples, missed, reaped))
        sys.stdout.flush()

    while True:
        line = stdin.readline()
        if not line or line.strip() != "start":
            return
        begin()
        peak = sample(force=True)
        reply(peak, 1)
        samples = 1
        started = time.monotonic()
        while not select.select([stdin], [], [], (
                None if not between else interval if time.monotonic() - started > 0.05
                else min(interval, 0.005)))[0]:
            peak = [max(p, f) for p, f in zip(peak, sample())]
            samples += 1
        command = stdin.readline().strip()
        peak = [max(p, f) for p, f in zip(peak, sample(force=True))]
        reply(peak, samples + 1, lost(), switches())
        if command != "stop":
            return


def main(argv):
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="python -m concbench.run.memory_sampler")
    parser.add_argument("--sample", type=int, required=True, metavar="PID")
    parser.add_argument("--partner", type=int, metavar="PID")
    parser.add_argument("--ends-only", action="store_true",
                        help="sample at each batch's start and end only")
    args = parser.parse_args(argv)
    # Ctrl-C reaches the whole process group: the worker decides, and
    # the sampler ends when the worker closes its pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from concbench.run.lifeline import follow
    # It ends when the process that started it (the worker it samples)
    # does, even one killed outright; were that one gone already, the
    # pipe it reads is at its end.
    follow(os.getppid())
    try:
        sampler_main(args.sample, args.partner, between=not args.ends_only)
    except BrokenPipeError:     # the worker is gone; so is its reader
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    main(sys.argv[1:])

"""The -o and --append file, written atomically by bench.py's master."""

import os
import time

import pyperf

from concbench.run.cleanup import signals_held


class OutputError(Exception):
    """The output cannot be written: one line for the user."""


def check_output(args):
    """Refuse before any benchmark runs, not after the last one."""
    if args.output and args.append:
        raise OutputError("give -o or --append, not both")
    if args.append:
        directory = os.path.dirname(os.path.abspath(args.append))
        if not os.access(directory, os.W_OK):
            raise OutputError("cannot write %s: directory %s is not writable"
                              % (args.append, directory))
    path = args.output
    if not path:
        return
    if os.path.exists(path) and not args.keep_earlier:
        raise OutputError("%s already exists; choose another -o file, use --append "
                          "%s to add to it, or --keep-earlier to move it aside"
                          % (path, path))
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise OutputError("cannot write %s: directory %s does not exist"
                          % (path, directory))
    if not os.access(directory, os.W_OK):
        raise OutputError("cannot write %s: directory %s is not writable"
                          % (path, directory))


class ResultsFile:
    """-o and --append, written here rather than by pyperf (path None: the
    results are only kept in memory).

    pyperf rewrites the file in place after each benchmark, so an interrupt
    during a write leaves a truncated JSON. Here every write goes to a new file
    in the same directory, flushed to disk, then renamed over the old one: the
    file is always absent or a valid pyperf JSON of the completed benchmarks.
    """

    def __init__(self, path, append=False):
        self.path = path
        self.suite = None
        self.saved = 0      # benchmarks in the file as last written
        if append and os.path.exists(path):
            try:
                self.suite = pyperf.BenchmarkSuite.load(path)
            except Exception as exc:   # pyperf raises several kinds here
                raise OutputError("--append %s: not a pyperf JSON file (%s)" % (
                    path, " ".join(str(exc).split()) or type(exc).__name__)) from None
            self.saved = len(self.suite)

    def add(self, bench, order=None):
        """Add ``bench``'s runs; ``order`` (name -> position) keeps the
        benchmarks in the matrix's order whatever order the runs came in
        (those of an --append file that the matrix lacks stay first)."""
        if self.suite is None:
            self.suite = pyperf.BenchmarkSuite([bench])
        else:
            self.suite.add_runs(bench)
        if order:
            benchmarks = sorted(self.suite.get_benchmarks(),
                                key=lambda b: order.get(b.get_name(), -1))
            self.suite = pyperf.BenchmarkSuite(benchmarks, self.suite.filename)
        if self.path is None:   # no -o: kept for the summary only
            return
        directory, name = os.path.split(os.path.abspath(self.path))
        suffix = ".gz" if name.endswith(".gz") else ""
        temporary = os.path.join(directory, ".%s.%d.tmp%s" % (name, os.getpid(), suffix))
        try:
            self.suite.dump(temporary)
            with open(temporary, "rb") as written:
                os.fsync(written.fileno())
            # A signal between the rename and the count would make the
            # message that names the kept runs count one benchmark short.
            with signals_held():
                os.replace(temporary, self.path)
                self.saved = len(self.suite)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise


def move_earlier(path):
    """--keep-earlier: move an existing -o file into earlier/ beside it, under
    its name and modification time, so that no result is lost or mixed in.
    Return where it went (None if there was no such file)."""
    if not os.path.exists(path):
        return None
    directory = os.path.join(os.path.dirname(os.path.abspath(path)), "earlier")
    stem, ext = os.path.splitext(os.path.basename(path))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(os.path.getmtime(path)))
    try:
        os.makedirs(directory, exist_ok=True)
        target = os.path.join(directory, "%s-%s%s" % (stem, stamp, ext))
        count = 1
        while os.path.exists(target):
            count += 1
            target = os.path.join(directory, "%s-%s-%d%s" % (stem, stamp, count, ext))
        os.rename(path, target)
    except OSError as exc:
        raise OutputError("cannot move the earlier %s aside: %s" % (path, exc)) from None
    return target

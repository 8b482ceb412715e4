"""A workload's parameters as command-line options (``Option``), the
options most workloads share (--items, --seed, --latency-ms, --jitter-ms,
--rate), and the model lists of the presets."""

import argparse


class Option:
    """A workload parameter that is also a bench.py option.

    A number within [low, high] (``kind`` int or float), one of ``choices``,
    or whatever ``parse`` accepts (it raises ValueError with a message). The
    same option may serve several workloads, each with its own default
    (``with_default``); ``required`` ones have no usable default, and a
    workload that lacks them is left out of a preset.
    """

    def __init__(self, param, flag, help, kind=None, low=None, high=None,
                 choices=None, parse=None, metavar=None, required=False,
                 default=None):
        self.param, self.flag, self.help = param, flag, help
        self.kind, self.low, self.high = kind, low, high
        self.choices, self.parse = choices, parse
        self.metavar, self.required, self.default = metavar, required, default

    def with_default(self, default):
        copy = Option.__new__(Option)
        copy.__dict__.update(self.__dict__, default=default)
        return copy

    def spec(self):
        """What must agree between workloads that share the option."""
        return (self.flag, self.help, self.kind, self.low, self.high,
                self.choices, self.parse, self.metavar, self.required)

    def convert(self, text):
        """argparse's ``type``: the value, or ArgumentTypeError in one line."""
        try:
            if self.parse is None and self.choices is None:
                try:
                    value = self.kind(text)
                except ValueError:
                    raise ValueError("%s: %r is not a number"
                                     % (self.flag, text)) from None
                return self.check(value, text)
            return self.check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    def check(self, value, shown=None):
        """``value`` if valid, else ValueError in one line: the same rules
        whether it comes from the command line or from a preset."""
        if self.parse is not None:
            return self.parse(value)
        if self.choices is not None:
            if value not in self.choices:
                raise ValueError("%s: %r is not one of %s"
                                 % (self.flag, value, ", ".join(self.choices)))
            return value
        if not self.low <= value <= self.high:
            raise ValueError("%s: %s is out of range [%s, %s]"
                             % (self.flag, value if shown is None else shown,
                                self.low, self.high))
        return value


# Options that several workloads share.
ITEMS = Option("items", "--items", "items per batch", int, 1, 10_000_000)


SEED = Option("seed", "--seed", "seed of the generated inputs", int, 0, 2**32 - 1,
              default=1)


LATENCY_MS = Option("latency_ms", "--latency-ms", "mean latency of an IO item, in ms",
                    float, 0.0, 60_000.0)


JITTER_MS = Option("jitter_ms", "--jitter-ms",
                   "latencies are drawn uniformly in latency +- jitter, in ms",
                   float, 0.0, 60_000.0)


# Open loop (IO workloads): --rate N/s, or a sweep over these rates.
SWEEP_RATES = (25.0, 100.0, 400.0, 1600.0, 6400.0)


SWEEP = "sweep"


def parse_rate(text):
    """--rate: items per second ("200" or "200/s"), above 0, or "sweep"."""
    text = str(text).strip()
    if text == SWEEP:
        return SWEEP
    number = text[:-2] if text.endswith("/s") else text
    try:
        value = float(number)
    except ValueError:
        raise ValueError("--rate: %r is not a rate (N or N/s items per second, or "
                         "sweep)" % text) from None
    if not 0 < value < float("inf"):
        raise ValueError("--rate: %s is not a rate above 0 items per second" % text)
    return value


RATE = Option("rate", "--rate", "IO workloads: open loop, items arriving on a fixed "
              "schedule at N per second whatever the model is doing, latency "
              "counted from each one's arrival; 'sweep': each IO workload at %s/s"
              % ", ".join("%g" % r for r in SWEEP_RATES),
              parse=parse_rate, metavar="N/s|sweep", default=0.0)


# Worker counts of the full preset's scaling series.
# IO workloads' thread counts follow concurrency, not cores; their process
# pools add the ladder's U and 2U to these.
THREADS_FULL = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


PROCESSES_FULL = [1, 2, 4, 8, 16, 32]


def preset(models, **params):
    """A workload's entry in a preset: the models to run and the sizes."""
    return {"models": list(models), "params": params}

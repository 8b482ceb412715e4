"""What the A/A controls say of a run: the console's last lines and the
report's header say the same."""

from concbench import schema as K
from concbench.rules import LEVEL_TEXT
from concbench.formatting import fmt_ratio


def control_state(row):
    """What a workload's A/A control says: "missing", "unusable" (no
    speedup: no reference, or no round shared with it), else its verdict."""
    if row is None:
        return "missing"
    if row.ratio is None:
        return "unusable"
    return row.verdict


def untrusted(controls):
    """The workloads whose control came out faster or slower."""
    return [name for name, row in controls.items()
            if control_state(row) in ("faster", "slower")]


def control_lines(groups, controls):
    """The A/A controls: one line when every workload has a usable one that
    is neither faster nor slower; a line that marks the run untrusted, and
    one that says which workloads have no control, otherwise."""
    # Workloads of plain pyperf benchmarks have no reference to control.
    states = {name: control_state(controls.get(name)) for name, rows in groups.items()
              if any(r.ours for r in rows)}
    if not states:
        return []
    lines = []
    for name in untrusted(controls):
        row = controls[name]
        lines.append("UNTRUSTED: %s's A/A control (%s against itself) came out "
                     "%s, %s after %d rounds: on this machine at this time, "
                     "differences of this size are not to be believed" % (
                         name, row.meta[K.CONTROL_OF], row.verdict,
                         fmt_ratio(row.ratio.point, row.ratio.low, row.ratio.high),
                         row.ratio.rounds))
    absent = [name for name, state in states.items() if state in ("missing", "unusable")]
    if absent:
        lines.append("control: none usable for %s (an older bench.py, --no-control, "
                     "plain pyperf, or a control that shares no round with its "
                     "reference): nothing there checks that the verdicts keep their "
                     "%s" % (", ".join(absent), LEVEL_TEXT))
    checked = [name for name, state in states.items()
               if state in ("same", "undecided")]
    if checked:
        lines.append("control: the reference against itself (A/A) is neither "
                     "faster nor slower in %s (%s)" % (
                         ", ".join(checked), ", ".join(
                             "%s %s" % (name, states[name]) for name in checked)))
    return lines

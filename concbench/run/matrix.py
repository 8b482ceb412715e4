"""The benchmark matrix: which workload runs under which model, in what order.

Built from the options alone, the same way in the master and in every
worker (pyperf selects a worker's benchmark by its position). Building it is
cheap: inputs, connections and metadata are made later, and only for the
benchmark a worker runs.
"""

import fnmatch

from concbench import ladder, models, workloads
from concbench.run import ceiling
from concbench.plugins import PluginError
from concbench.run.cell import Cell
from concbench.run.options import workload_options
from concbench.run.presets import PRESETS, workload_plan
from concbench.run.schedule import pairing
from concbench.workloads.base import RATE, SWEEP, SWEEP_RATES

# The A/A control's model name (models/control.py).
CONTROL = "control"


class MatrixError(ValueError):
    """The selection cannot run: one line for the user."""


def split(text):
    return [part.strip() for part in text.split(",") if part.strip()]


def preset_models(preset_name, names):
    """A workload's model names in a preset, then those that model families
    add to every workload of the preset (not to a scenario's)."""
    names = list(names)
    if "workloads" not in PRESETS[preset_name]:
        for family in models.families():
            names.extend(name for name in family.PRESETS.get(preset_name, ())
                         if name not in names)
    return names


def select_models(preset_names, patterns):
    """The preset's models, filtered by glob patterns, plus explicit names."""
    preset_models = [models.parse(name) for name in preset_names]
    if not patterns:
        return preset_models
    chosen = []
    for pattern in patterns:
        if any(char in pattern for char in "*?["):
            chosen.extend(m for m in preset_models
                          if fnmatch.fnmatchcase(m.name, pattern))
        else:
            chosen.append(models.parse(pattern))
    # Keep the preset's order, then explicit models in the order given.
    order = {m.name: i for i, m in enumerate(preset_models)}
    unique = {}
    for model in chosen:
        unique.setdefault(model.name, model)
    return sorted(unique.values(),
                  key=lambda m: order.get(m.name, len(order)))


def with_control(chosen, reference):
    """The models with the A/A control (``reference`` again, under its own
    name) right after the reference, when the reference is among them (and
    the control is not already)."""
    from concbench.models.control import Control

    position = next((i for i, m in enumerate(chosen) if m.name == reference.name), None)
    if position is None or any(m.name == CONTROL for m in chosen):
        return chosen
    return chosen[:position + 1] + [Control(reference)] + chosen[position + 1:]


def with_reference(chosen, reference, asked):
    """--reference: the chosen baseline runs whatever the selection, first
    (``asked``: whether the user named one); the default reference, only
    where the preset or the selection has it."""
    if not asked or any(m.name == reference.name for m in chosen):
        return chosen
    return [reference] + chosen


def reference_model(args):
    """The model speedups are measured against: --reference, else the
    registry's (sequential)."""
    name = getattr(args, "reference", None)
    if not name:
        return models.parse(models.reference_name())
    try:
        model = models.parse(name)
    except ValueError as exc:
        raise MatrixError("--reference: %s" % exc) from None
    if model.name == CONTROL:
        raise MatrixError("--reference: the A/A control is the reference run again; "
                          "name the model to compare with")
    return model


def usable_workloads(asked, left_out):
    """{name: class} of every workload, in registry order (plugins after the
    built-in ones). A plugin that cannot be used stops the run if it was
    asked for (``asked``: the names given, None for all), else it is left
    out with a warning."""
    try:
        known = workloads.names()
    except PluginError as exc:
        raise MatrixError(str(exc)) from None
    if ceiling.LABEL in known:
        raise MatrixError("a workload is named %r, which the machine's ceiling's "
                          "benchmarks take; rename it" % ceiling.LABEL)
    found = {}
    for name in known:
        try:
            found[name] = workloads.get(name)
        except PluginError as exc:
            if asked is None or name in asked:
                raise MatrixError(str(exc)) from None
            left_out.append("warning: %s (not asked for, so left out)" % exc)
    return found


def selected_workloads(args, left_out):
    """The workload classes to run, in registry order, with their plans."""
    asked = split(args.workload) if args.workload else None
    usable = usable_workloads(asked, left_out)
    plans = {}
    for name, cls in usable.items():
        plan = workload_plan(args.preset, cls)
        if plan is not None:
            plans[name] = plan
    given = {option.param: getattr(args, option.param, None)
             for option in workload_options()}
    if args.workload:
        names = asked
        unknown = [name for name in names if name not in usable]
        if unknown or not names:
            raise MatrixError("unknown workload %r; workloads are: %s"
                              % (",".join(unknown) or args.workload,
                                 ", ".join(usable)))
        names = [name for name in usable if name in names]
        absent = [name for name in names if name not in plans]
        if absent:
            raise MatrixError("preset %s has no %s workload; its workloads are: %s"
                              % (args.preset, ",".join(absent), ", ".join(plans)))
        for name in names:
            missing = workloads.get(name).missing(given)
            if missing:
                raise MatrixError("the %s workload needs %s (see --help)"
                                  % (name, " and ".join(missing)))
    else:
        names = []
        for name in plans:
            missing = workloads.get(name).missing(given)
            if missing:
                left_out.append("%s: left out, it needs %s"
                                % (name, " and ".join(missing)))
            else:
                names.append(name)
    return [(usable[name], plans[name]) for name in names]


def open_loop_only(args, selected, left_out):
    """Under --rate, the IO workloads alone: a CPU workload named outright
    is an error; one the preset has is left out, and said so."""
    if not getattr(args, RATE.param, None):
        return selected
    kept = []
    for cls, plan in selected:
        if RATE.param in cls.defaults():
            kept.append((cls, plan))
        elif args.workload:
            raise MatrixError("--rate applies to IO workloads (items that wait), not "
                              "to %s, a %s workload" % (cls.name, cls.kind))
        else:
            left_out.append("%s: left out, --rate applies to IO workloads" % cls.name)
    return kept


def sweep(params):
    """The parameters of each workload to run: one per rate of a sweep."""
    if params.get(RATE.param) != SWEEP:
        return [params]
    return [dict(params, rate=rate) for rate in SWEEP_RATES]


def check_options_apply(args, classes):
    """An option given for none of the selected workloads is a mistake."""
    for option in workload_options():
        if getattr(args, option.param, None) is None:
            continue
        if not any(option.param in cls.defaults() for cls in classes):
            raise MatrixError("%s does not apply to the selected workloads (%s)"
                              % (option.flag, ", ".join(c.name for c in classes)))


def build_matrix(args, left_out=None):
    """The benchmarks to run. A workload the preset has but that needs an
    option the user did not give, or a model that cannot run a workload, is
    left out, with the reason added to ``left_out``; any other problem
    raises MatrixError."""
    left_out = [] if left_out is None else left_out
    selected = selected_workloads(args, left_out)
    check_options_apply(args, [cls for cls, _ in selected])
    patterns = split(args.model) if args.model else None
    # Models named outright must run: one that cannot is an error, not a note.
    named = {p for p in patterns or () if not any(c in p for c in "*?[")}
    # Pairing in the worker records the reference's batches through the
    # per-run figures (the hook): without them, runs pair by round.
    choice = "round" if getattr(args, "no_run_figures", False) else \
        getattr(args, "pairing", None) or "auto"
    matrix = []
    preset_names = set()
    unsupported = []
    reference = reference_model(args)
    asked = bool(getattr(args, "reference", None))
    selected = open_loop_only(args, selected, left_out)
    if getattr(args, "ceiling", False) and getattr(args, "no_run_figures", False):
        raise MatrixError("--ceiling records its pairs in the per-run figures, "
                          "which --no-run-figures leaves out")
    for cls, (params, names) in selected:
        for param in cls.defaults():
            value = getattr(args, param, None)
            if value is not None:
                params[param] = value
        # The ladders made names for this machine (or --cpus) and this batch.
        items = params.get("items", cls.defaults().get("items"))
        names = ladder.resolve(preset_models(args.preset, names), args, items,
                               cls.most_workers)
        preset_names.update(names)
        for workload_params in sweep(params):
            try:
                workload = cls(**workload_params)
                chosen = with_reference(select_models(names, patterns), reference, asked)
                for model in chosen:
                    model.configure(args)
                # A scenario reproduces a seed's experiment, in one or two
                # rounds that no interval can decide: a control only adds time.
                if not args.no_control and "workloads" not in PRESETS[args.preset]:
                    chosen = with_control(chosen, reference)
            except ValueError as exc:   # ModelError included
                raise MatrixError(str(exc)) from None
            reason = reference.supports(workload)
            if reason:
                raise MatrixError("--reference %s cannot run %s: %s" % (
                    reference.name, cls.name, reason) if asked else
                    "the reference %s cannot run %s: %s" % (reference.name, cls.name, reason))
            for model in chosen:
                reason = left_by_check(model, args) or model.supports(workload)
                if reason and model.name in named:
                    raise MatrixError("%s cannot run %s: %s"
                                      % (model.name, cls.name, reason))
                if reason:
                    left_out.append("%s/%s: left out, %s"
                                    % (workload.label, model.name, reason))
                    unsupported.append(model.name)
                else:
                    overhead = getattr(args, "latency_overhead", False)
                    matrix.append(Cell(workload, model,
                                        "worker" if overhead else
                                        pairing(workload, model, choice, reference.name),
                                        overhead,
                                        record=not getattr(args, "no_latency", False),
                                        reference=reference.name))
    if ceiling.wanted(args, {cls.kind for cls, _ in selected}):
        # The machine's own speedup at each rung, after every model's
        # benchmark, so that their positions do not depend on it.
        matrix.extend(ceiling.benches(args))
    matrix.extend(beside(matrix, args.side_by_side))
    for plugin in models.plugins().values():
        if plugin.broken():     # none of the run's models is of its family
            left_out.append("warning: %s (not asked for, so left out)" % plugin.broken())
    for pattern in patterns or ():
        if not any(fnmatch.fnmatchcase(name, pattern)
                   for name in [b.model.name for b in matrix] + unsupported):
            raise MatrixError("model pattern %r matches no model of preset %r; its "
                              "models are: %s" % (pattern, args.preset,
                                                  ", ".join(sorted(preset_names))))
    return matrix


def left_by_check(model, args):
    """Why the master's check left ``model`` out (``Model.check_run``), or ""."""
    for line in (getattr(args, "left_out_models", None) or "").splitlines():
        pattern, _, why = line.partition("=")
        if fnmatch.fnmatchcase(model.name, pattern):
            return why
    return ""


def checked_families(args, matrix):
    """Each model family's own check of its rows, once, in the master: the
    lines of what it leaves out (``--left-out-models``); MatrixError for
    what stops the run."""
    found = {}
    for bench in matrix:
        found.setdefault(type(bench.model), {})[bench.model.name] = bench.model
    lines = []
    for family, chosen in found.items():
        try:
            left = family.check_run(args, list(chosen.values()))
        except ValueError as exc:
            raise MatrixError(str(exc)) from None
        lines.extend("%s=%s" % (pattern, why) for pattern, why in left.items())
    return "\n".join(lines)


def beside(matrix, text):
    """The benchmarks of a race's comparisons side by side that the master
    added (``text``, --side-by-side: "rival:leader" indexes into ``matrix``, comma-separated,
    in the order they were added): the rival's model run beside the
    leader's, in place of the reference's, in its worker."""
    found = []
    for part in (text or "").split(","):
        if not part:
            continue
        try:
            rival, leader = (matrix[int(index)] for index in part.split(":"))
        except (ValueError, IndexError):
            raise MatrixError("--side-by-side: %r is not rival:leader indexes of the "
                              "matrix" % part) from None
        found.append(beside_bench(rival, leader))
    return found


def beside_bench(rival, leader):
    """``rival``'s model run beside ``leader``'s, on its workload."""
    return Cell(rival.workload, rival.model, "worker", record=False,
                 reference=rival.reference, beside=leader.model.name)


def base_count(matrix):
    """How many benchmarks the preset's rounds run: all but those a race
    added side by side, which run only in added rounds."""
    return sum(1 for bench in matrix if not bench.beside)

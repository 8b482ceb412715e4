"""The metadata schema: every key a real run writes is in it, every key a
run must carry is there, no key is spelled outside it, and the hook
combines batches as it says (the documentation's table is made from it:
tests/test_docs.py)."""

import ast

import pyperf
import pytest

from concbench import schema, workloads
from concbench.run.run_figures import RunFigures
from conftest import ROOT, TINY_RUNNER, run_bench

# The package's modules, as the grep sees them.
PACKAGE = ("concbench", "workloads", "models", "servers")

# Words that are a schema key's name and also the name of something else in
# these modules, each where it names that other thing.
OTHER_NAMESPACES = {
    # The workload parameter --items (written as items_per_batch): preset
    # sizes and params["items"].
    "items": {"concbench/run/presets.py", "concbench/run/matrix.py", "workloads/base.py",
              "workloads/options.py",
              "workloads/encode.py", "workloads/rotate.py", "workloads/sleep.py",
              "workloads/http.py", "workloads/db.py"},
    # pyperf Runner's option in the presets; the model families' own names;
    # the memory sampler's answer fields.
    "processes": {"concbench/run/presets.py", "models/processes.py",
                  "concbench/run/memory_sampler.py", "concbench/run/run_figures.py"},
    "threads": {"models/threads.py", "concbench/run/memory_sampler.py",
                "concbench/run/run_figures.py"},
    "interpreters": {"models/interpreters.py"},
    # bench.py's command-line options (argparse destinations).
    # (and workloads/base.py's __all__, which names the helper preset()).
    "preset": {"concbench/run/options.py", "workloads/base.py"},
    "workload": {"concbench/run/options.py"},
    "model": {"concbench/run/options.py"}, "order_seed": {"concbench/run/options.py"},
    "workload_module": {"concbench/run/options.py"},
    # A model's constructor parameter (the event-loop kind), and the server's.
    "loop": {"models/eager.py", "servers/__main__.py"},
    # The report's flags (words in its "flags" column) and a column's title.
    "failures": {"concbench/analysis/rows.py", "concbench/report/verdicts.py",
                 "concbench/report/columns.py"},
    "gil": {"concbench/analysis/rows.py"},
    # --pairing's destination, and its value "round" (pair by round).
    "pairing": {"concbench/run/options.py", "concbench/run/matrix.py"},
    "round": {"concbench/run/matrix.py", "concbench/run/cell.py", "concbench/analysis/rows.py",
              "concbench/run/schedule.py"},
    # The report's column of the longest item latency measured; the metadata
    # key of that name is the longest latency a workload drew.
    "latency_max_s": {"concbench/report/columns.py"},
}


def spellings(path):
    """(name, line) of every string constant, and of every keyword argument
    of dict() or .update(), in a module."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value, node.lineno
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("dict", "update"):
                for keyword in node.keywords:
                    if keyword.arg:
                        yield keyword.arg, node.lineno


@pytest.mark.quick
def test_no_key_is_spelled_outside_the_schema():
    found = []
    for top in PACKAGE:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            if module == "concbench/schema.py":
                continue
            for name, line in spellings(path):
                if name in schema.BY_NAME and module not in OTHER_NAMESPACES.get(name, ()):
                    found.append("%s:%d %r" % (module, line, name))
    assert not found, "metadata keys spelled outside concbench/schema.py: " + ", ".join(found)


@pytest.mark.quick
def test_the_scan_finds_a_spelled_key(tmp_path):
    """The check above can fail: a module that writes a key by its name."""
    module = tmp_path / "writer.py"
    module.write_text('meta = {}\nmeta["cpu_tree"] = 1.0\nmeta.update(mem_tree_peak=2)\n')
    names = {name for name, _ in spellings(module)}
    assert {"cpu_tree", "mem_tree_peak"} <= names <= set(schema.BY_NAME) | {"meta"}


@pytest.mark.quick
def test_the_oldest_names_are_still_keys():
    """What files already written carry: a key renamed in the schema would
    no longer be read from them."""
    assert {"mem_tree_peak", "cpu_tree", "round", "items", "items_per_batch",
            "reference_model", "gil_enabled"} <= set(schema.BY_NAME)


@pytest.fixture(scope="module")
def tiny_suite(tmp_path_factory):
    """A real run: sleep and http under four models, and encode on a
    process pool, with run figures on."""
    tmp = tmp_path_factory.mktemp("schema")
    proc = run_bench(["--workload", "sleep,http,encode", "--model",
                      "sequential,threads-2,processes-2-chunk-1,asyncio", "--items", "4",
                      "--latency-ms", "2", "--jitter-ms", "1"] + TINY_RUNNER
                     + ["-o", "tiny.json"], tmp)
    assert proc.returncode == 0, proc.stderr
    return pyperf.BenchmarkSuite.load(str(tmp / "tiny.json"))


def parameters(workload):
    return {option.param for option in workloads.get(workload).OPTIONS}


def test_every_key_of_a_run_is_in_the_schema(tiny_suite):
    unknown = set()
    for bench in tiny_suite.get_benchmarks():
        for run in bench.get_runs():
            meta = run.get_metadata()
            params = parameters(meta[schema.WORKLOAD])
            unknown |= {key for key in meta if not schema.known(key, params)}
    assert not unknown, "keys not in concbench/schema.py: %s" % sorted(unknown)


def test_every_required_key_is_there(tiny_suite):
    required = [key for key in schema.KEYS if key.required]
    assert {key.scope for key in required} == {schema.SUITE, schema.BENCH, schema.RUN}
    for bench in tiny_suite.get_benchmarks():
        for run in bench.get_runs():
            if not run.values:
                continue        # a warm-up-only run carries no figures
            meta = run.get_metadata()
            missing = [key for key in required if key not in meta]
            assert not missing, (bench.get_name(), missing)
            for key in required:
                assert of_its_type(key, meta[key]), (key, meta[key])


def of_its_type(key, value):
    if key == schema.CONCURRENCY:
        return isinstance(value, int) or value == "unbounded"
    if key.kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, key.kind)


def test_http_keys_are_written(tiny_suite):
    meta = tiny_suite.get_benchmark("http/asyncio").get_runs()[-1].get_metadata()
    for key in (schema.BYTES_IN, schema.SERVER_CPU, schema.SERVER_REQUESTS,
                schema.HTTP_SERVER, schema.HTTP_CLIENT_ASYNC):
        assert key in meta, key
    assert meta[schema.SERVER_REQUESTS] >= meta[schema.ITEMS]


@pytest.mark.quick
def test_batches_combine_as_the_schema_says():
    hook = RunFigures()
    hook.add_batch(0.5, {schema.CPU_TREE: 1.0, schema.MEM_TREE_PEAK: 10,
                         schema.MEM_TREE_BASE: 7, schema.PROBE_S: 0.002,
                         schema.GIL_ENABLED: False, schema.CPU_COMPLETE: True,
                         schema.MEM_METHOD: "pss", schema.failures_key("short body"): 1,
                         schema.SERVER_CPU: 0.1})
    hook.add_batch(0.5, {schema.CPU_TREE: 2.0, schema.MEM_TREE_PEAK: 30,
                         schema.MEM_TREE_BASE: 9, schema.PROBE_S: 0.001,
                         schema.GIL_ENABLED: True, schema.CPU_COMPLETE: False,
                         schema.MEM_METHOD: "pss", schema.failures_key("short body"): 2,
                         schema.SERVER_CPU: 0.3})
    assert hook.figures() == {
        "cpu_tree": 3.0, "mem_tree_peak": 30, "mem_tree_base": 7, "probe_s": 0.001,
        "gil_enabled": "yes", "cpu_complete": "no", "mem_method": "pss",
        "failures_short_body": 3, "server_cpu": 0.4, "server_busy": 0.4}
    # A paired run keeps each reference batch in order, and the median gap.
    paired = RunFigures()
    for seconds, gap in ((0.25, 0.3), (0.125, 0.1), (0.5, 0.2)):
        paired.add_batch(0.1, {schema.PAIRED_REFERENCE_S: seconds, schema.PAIR_GAP_S: gap,
                               schema.PAIRED_REFERENCE_FAILURES: 1})
    assert paired.figures() == {"paired_reference_s": "0.25 0.125 0.5",
                                "pair_gap_s": 0.2, "paired_reference_failures": 3}

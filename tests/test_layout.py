"""The code's layout (docs/plugins.md, "Layout"): no circle of imports, and
imports that go one way: the run and the report read the analysis; the
analysis reads neither; the run never asks the report. Read from the
source with ast, so a lazy import inside a function counts as much as one
at the top."""

import ast

import pytest

from conftest import ROOT

# Package -> folder of the checkout (pyproject.toml's package-dir).
FOLDERS = {"concbench": "concbench", "concbench.workloads": "workloads",
           "concbench.models": "models", "concbench.servers": "servers"}


def modules():
    """{dotted module name: path} of every module of the package."""
    found = {}
    for package, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package] + parts)] = path
    return found


def imports(found):
    """{module: the modules of the package it imports, anywhere in it}."""
    graph = {}
    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in found)
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                target = node.module if not node.level else \
                    base + ("." + node.module if node.module else "")
                subs = {target + "." + alias.name for alias in node.names} & set(found)
                edges.update(subs or ({target} & set(found)))
        edges.discard(name)
        graph[name] = edges
    return graph


def circles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for node in graph:
        if node not in index:
            visit(node)
    return found


@pytest.mark.quick
def test_the_package_is_found():
    assert len(modules()) > 80


@pytest.mark.quick
def test_no_circle_of_imports():
    graph = imports(modules())
    assert "concbench.run.partner" in graph["concbench.run.worker"]
    assert circles(graph) == []


@pytest.mark.quick
def test_the_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


@pytest.mark.quick
def test_imports_go_one_way():
    """The run decides what to measure next from the analysis, as the
    report words it from the same code; neither asks the other."""
    wrong = []
    for name, targets in imports(modules()).items():
        for target in targets:
            if name.startswith("concbench.run") and target.startswith("concbench.report") \
                    or name.startswith("concbench.analysis") and target.startswith(
                        ("concbench.run", "concbench.report")) \
                    or name.startswith("concbench.report") and target.startswith(
                        "concbench.run"):
                wrong.append("%s -> %s" % (name, target))
    assert not wrong, wrong


@pytest.mark.quick
def test_the_package_imports_none_of_the_research_tools():
    """research/ is outside the wheel: no module of the package may need it."""
    wrong = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            wrong.extend("%s -> %s" % (name, n) for n in names if n.split(".")[0] == "research")
    assert not wrong, wrong


# What a test of the quick tier (make check) must not do, by the names it
# would do it with: run bench.py or a plugin's run, a simulation, the docs
# build, a browser, tox.
HEAVY_NAMES = {"run_bench", "BENCH", "start_bench", "concbench", "gate_rates", "null_rates",
               "demo_plugin", "padded_plugin", "first_batch", "browser", "built"}
HEAVY_MODULES = ("research.simulation", "research.synthetic", "research.given_up", "sphinx")


def heavy_parts(node):
    """What in ``node`` (a function) starts heavy work, by name."""
    found = []
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, str) and (
                part.value.split("/")[-1] == "bench.py" or part.value in ("tox", "sphinx")):
            found.append(part.value)
        elif isinstance(part, ast.Name) and part.id in HEAVY_NAMES:
            found.append(part.id)
        elif isinstance(part, ast.arg) and part.arg in HEAVY_NAMES:
            found.append(part.arg)
        elif isinstance(part, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in part.names] if isinstance(part, ast.Import) else [
                part.module or ""]
            found.extend(n for n in names if n.startswith(HEAVY_MODULES))
    return found


def quick_tests(path):
    """(name, what it or a fixture or helper of its module it names starts
    of heavy work) of each test of ``path`` marked quick."""
    tree = ast.parse(path.read_text())
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    for node in defined.values():
        if "pytest.mark.quick" not in [ast.unparse(d) for d in node.decorator_list]:
            continue
        named = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        named |= {a.arg for a in node.args.args}
        found = heavy_parts(node)
        for other in named & set(defined) - {node.name}:
            found.extend(heavy_parts(defined[other]))
        yield node.name, found


@pytest.mark.quick
def test_the_quick_tier_starts_no_benchmark_and_no_simulation():
    found = dict((path.name + "::" + name, words)
                 for path in sorted((ROOT / "tests").glob("test_*.py"))
                 for name, words in quick_tests(path))
    assert len(found) > 100, len(found)
    assert {name: words for name, words in found.items() if words} == {}


@pytest.mark.quick
def test_import_paths_that_plugins_and_entry_points_use_keep_working():
    """Modules that moved keep a thin alias where a plugin, or an install's
    entry point, may name them."""
    import importlib
    from importlib.metadata import entry_points

    from concbench.item_stamps import Stamped
    from concbench.run.run_figures import RunFigures

    assert importlib.import_module("concbench.latency").Stamped is Stamped
    assert importlib.import_module("concbench.run.record").RunFigures is RunFigures
    for name, attributes in (("concbench.workloads.simple", ("workload",)),
                             ("concbench.workloads.base", ("Workload", "Option", "ITEMS")),
                             ("concbench.models.base", ("Model",))):
        module = importlib.import_module(name)
        assert all(hasattr(module, a) for a in attributes), name
    hooks = [point for point in entry_points(group="pyperf.hook") if point.name == "concbench"]
    assert [point.load() for point in hooks] == [RunFigures]

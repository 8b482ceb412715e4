"""The code's layout (docs/plugins.md, "Layout"): no circle of imports, and imports that go one way: the run and the report
read the analysis; the analysis reads neither; the run never asks the
report. Read from the source with ast, so a lazy import inside a function
counts as much as one at the top."""

import ast

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


def test_the_package_is_found():
    assert len(modules()) > 80


def test_no_circle_of_imports():
    graph = imports(modules())
    assert "concbench.run.partner" in graph["concbench.run.worker"]
    assert circles(graph) == []


def test_the_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


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

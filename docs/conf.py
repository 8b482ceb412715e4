"""Sphinx configuration: the pages are Markdown (MyST), the option reference
is made from bench.py's and report.py's argument parsers (sphinx-argparse),
and the metadata table from concbench/schema.py, at every build, so that
none of them can drift from the code."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

project = "concurrency-bench"
author = "concurrency-bench contributors"
extensions = ["myst_parser", "sphinxarg.ext"]
# The levels the statistics page states, and the simulation's error rates,
# come from the code and from the simulation's last recorded run
# (docs/data/simulation.json, written by `python -m research.simulation
# --json`): {{ name }} in a page (research.doc_numbers).
myst_enable_extensions = ["substitution"]
SIMULATION = os.path.join(ROOT, "docs", "data", "simulation.json")


def _substitutions():
    from research import doc_numbers as levels

    found = levels.substitutions()
    found.update(levels.simulation(SIMULATION))
    return found


myst_substitutions = _substitutions()
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
# Links between pages resolve in these domains (sphinx-argparse's has no
# lookup for them).
myst_ref_domains = ["std"]
# Options and code are written as typed: no "--" turned into a dash.
smartquotes = False
html_theme = "alabaster"
html_static_path = []
html_theme_options = {"nosidebar": False}


def write_generated(app):
    """docs/_generated/: the metadata table, made from the schema, and the
    simulation's table, from its recorded run."""
    from concbench import schema

    folder = os.path.join(app.srcdir, "_generated")
    os.makedirs(folder, exist_ok=True)
    for name, text in (("metadata-table.md", schema.markdown_table()),
                       ("simulation-table.md", myst_substitutions["simulation_table"])):
        target = os.path.join(folder, name)
        text += "\n"
        if not os.path.exists(target) or open(target).read() != text:
            with open(target, "w") as f:
                f.write(text)


def setup(app):
    app.connect("builder-inited", write_generated)

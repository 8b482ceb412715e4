"""The document as one self-contained HTML page: no server, no network, no
file beside it. Tables sort on a click (their cells carry the raw values),
charts are inline SVG, and the pyperf files the page was made from are
embedded, each with a download link."""

import base64
import html
import json
import math
import os

from concbench import schema as K

from . import plots
from concbench.rules import LEVEL_TEXT

from .columns import ON_PAGE, titles
from .document import is_comparison, label
from .render_text import (agreement_line, best_line, comparison_entries,
                          comparison_headers, workload_control)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1700px;padding:0 1.5em 3em;
color:#222}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
h2 small{font-weight:normal;color:#555;font-size:.65em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}
td,th{padding:.2em .45em;border-bottom:1px solid #e3e3e3;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}th{background:#f3f3f3;position:sticky;top:0}
table.sortable th{cursor:pointer}table.sortable th:after{content:" \\2195";color:#aaa}
.scroll{overflow-x:auto}dl.env{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em}
dl.env dt{font-weight:600}dl.env dd{margin:0}.note{color:#8a5300}.takeaways li{margin:.2em 0}
.untrusted{color:#b00020;font-weight:600}figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.downloads a{margin-right:1em}
"""

SCRIPT = """
function sortKey(row, column) {
  var found = row.cells[column], v = found && found.dataset.value;
  if (v === undefined || v === "null" || v === "") return null;
  var n = Number(v);
  if (!isNaN(n)) return n;
  try { v = JSON.parse(v); } catch (e) { return null; }
  return typeof v === "number" || typeof v === "string" ? v : null;
}
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], up = th.dataset.order !== "up";
      th.dataset.order = up ? "up" : "down";
      var rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        var x = sortKey(a, column), y = sortKey(b, column);
        if (x === null) return y === null ? 0 : 1; if (y === null) return -1;
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1); });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.querySelectorAll("a[data-raw]").forEach(function (link) {
  var text = atob(document.getElementById(link.dataset.raw).textContent.trim());
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  link.href = URL.createObjectURL(new Blob([bytes], {type: "application/octet-stream"}));
});
"""


def esc(text):
    return html.escape(str(text), quote=True)


def cell(text, key, value, tag="td"):
    if isinstance(value, float) and not math.isfinite(value):
        value = None    # sorts last, as a missing value does
    return '<%s data-key="%s" data-value="%s">%s</%s>' % (
        tag, esc(key), esc(json.dumps(value)), esc(text), tag)


def table(headers, rows):
    """``rows``: lists of cells already rendered."""
    head = "".join("<th>%s</th>" % esc(h) for h in headers)
    body = "".join("<tr>%s</tr>" % "".join(cells) for cells in rows)
    return ('<div class="scroll"><table class="sortable"><thead><tr>%s</tr></thead>'
            '<tbody>%s</tbody></table></div>' % (head, body))


def environment(document):
    """The header lines, one definition list per file."""
    out, paths = [], document.get("files") or [document["file"]]
    for line in document["header"]:
        if not line.startswith("  "):
            path = next(p for p in paths if line.startswith(p + ": "))
            if out:
                out.append("</dl>")
            out.append('<h3>%s</h3><dl class="env"><dt>Python</dt><dd>%s</dd>'
                       % (esc(path), esc(line[len(path) + 2:])))
        else:
            name, _, value = line.strip().partition(": ")
            marked = ' class="untrusted"' if name == "UNTRUSTED" else ""
            out.append("<dt%s>%s</dt><dd%s>%s</dd>" % (marked, esc(name), marked,
                                                       esc(value)))
    return "".join(out) + "</dl>"


def bullets(lines):
    return ('<ul class="takeaways">%s</ul>' % "".join("<li>%s</li>" % esc(t) for t in lines)
            if lines else "")


def figure(chart, caption):
    return "<figure>%s<figcaption>%s</figcaption></figure>" % (chart, esc(caption))


def single_body(document, plt):
    parts = ['<p class="note">%s</p>' % esc(n) for n in document["notes"]]
    for name, entry in document["workloads"].items():
        parts.append('<section id="workload-%s"><h2>%s <small>%s</small></h2>'
                     % (esc(name), esc(name), esc(entry["params"])))
        rows = [[cell(c.page(row), c.key, row[c.key]) for c in ON_PAGE]
                for row in entry["rows"]]
        parts.append(table(titles(ON_PAGE, entry["rows"]), rows))
        parts.append(bullets(workload_control(entry) + entry["takeaways"]))
        if plt is not None:
            for suffix, chart in plots.workload_charts(plt, name, entry):
                parts.append(figure(plots.svg(plt, chart), {
                    "": "Speedup against the reference with its %s interval (log "
                        "axis), time per batch against the ideal, and the peak "
                        "memory of the process tree." % LEVEL_TEXT,
                    "-scaling": "Speedup against the worker count, per series, with "
                                "%s intervals." % LEVEL_TEXT,
                    "-latency": "Each item's wait for its result, by percentile (log "
                                "axes: 50, 90, 99, 99.9%, and the largest), one line "
                                "per model."}[suffix]))
        parts.append("</section>")
    if document.get("sweeps"):
        parts.append("<section><h2>Rate sweeps</h2>%s</section>" % bullets(document["sweeps"]))
    return "".join(parts)


def comparison_body(document, plt):
    parts = []
    for workload in dict.fromkeys(r[K.WORKLOAD] for r in document["benchmarks"]):
        records = [r for r in document["benchmarks"] if r[K.WORKLOAD] == workload]
        headers = comparison_headers([label(p) for p in document["files"]], records)
        parts.append('<section id="workload-%s"><h2>%s</h2>' % (esc(workload), esc(workload)))
        rows = []
        for record in records:
            rows.append([cell(record["benchmark"], "benchmark", record["benchmark"])]
                        + [cell(*entry) for entry in comparison_entries(record)])
        parts.append(table(headers, rows))
        parts.append(bullets([line for line in [best_line(document, workload)] if line]))
        if plt is not None:
            parts.append(figure(plots.svg(plt, plots.comparison_figure(plt, document, workload)),
                                "Each file's time per batch, and its time against the "
                                "first file's with the %s interval (log axis)." % LEVEL_TEXT))
        parts.append("</section>")
    parts.append(bullets([agreement_line(document, f) for f in document["agreement"]]))
    return "".join(parts)


def render(document, sources):
    """``sources``: (path, bytes) of each pyperf file the document was made
    from, embedded in base64 (which no file's text can break out of) and
    downloaded as they are, a ``.json.gz`` as itself."""
    plt = plots.pyplot()
    comparison = is_comparison(document)
    title = "concurrency-bench: " + ", ".join(label(p) for p in (
        document["files"] if comparison else [document["file"]]))
    raw = "".join('<script type="application/octet-stream" id="raw-%d">%s</script>'
                  % (i, base64.b64encode(data).decode("ascii"))
                  for i, (_, data) in enumerate(sources))
    links = "".join('<a data-raw="raw-%d" download="%s" href="#">download %s</a>'
                    % (i, esc(os.path.basename(path)), esc(os.path.basename(path)))
                    for i, (path, _) in enumerate(sources))
    missing = ("" if plt is not None else '<p class="note">No charts: they need '
               "matplotlib (pip install matplotlib).</p>")
    body = comparison_body(document, plt) if comparison else single_body(document, plt)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            "<title>%s</title><style>%s</style></head><body><h1>%s</h1>"
            '<p class="downloads">%s</p>%s%s%s%s<script>%s</script></body></html>\n'
            % (esc(title), STYLE, esc(title), links, environment(document), missing,
               body, raw, SCRIPT))

"""report.py: tables, charts and a shareable page from bench.py's JSON files.

pyperf shows time; choosing a concurrency model also takes memory, CPU,
failures and how far each model is from what is physically possible. Per
workload, one row per model; with several files (two Python versions, two
loop types, two machines), the files side by side with the change and
whether it is significant. It reads the files through pyperf's public API
only.

The modules, each importing only those after it in this list: ``cli``
(options, main); ``render_text``, ``render_csv``, ``render_html`` (each
renders the document, nothing else); ``plots`` (charts from the document);
``document`` (the document, built once); ``compare`` (several files);
``verdicts`` (ties, winners, takeaways, agreement); ``environment`` (the
header's facts); ``columns`` (the table's columns and formats); ``load``
(reading and checking files). A benchmark's rows, speedups, verdicts and
the questions they answer are the analysis package's
(``concbench.analysis``), which bench.py reads too.
"""


def main(argv=None, prog="report.py"):
    from .cli import main as run
    return run(argv, prog)

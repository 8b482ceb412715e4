"""The installed command: ``concbench run|report|list`` (or ``python -m
concbench``), the same as the checkout's ``./bench.py`` and ``./report.py``.

pyperf re-executes the program in every worker; under this command the
workers run ``python -m concbench run``, so they find the same code from
any directory, installed or not.
"""

import sys

USAGE = """usage: concbench COMMAND [OPTION...]

commands:
  run      run the benchmark matrix (the options of ./bench.py; run --help)
  report   tables, charts and a page from its JSON files (./report.py's options)
  list     the benchmarks a run with the same options would run

  concbench run -o data.json
  concbench run --workload-module my_workload.py --model sequential,threads-4 -o mine.json
  concbench report data.json --html data.html"""

COMMANDS = ("run", "report", "list")


def run(argv, prog):
    from concbench.run import gil

    gil.watch()     # before any extension is imported: see concbench.run.gil
    from concbench.run import cli

    sys.argv = [sys.argv[0]] + list(argv)
    return cli.main(prog=prog, program_args=("-m", "concbench", "run"))


def main(argv=None):
    try:
        return command(argv)
    except KeyboardInterrupt:   # Ctrl-C while it starts; a run says more
        return 130


def command(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print("concbench: error: a command is needed: %s (concbench --help)"
              % ", ".join(COMMANDS), file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run(rest, "concbench run")
    if command == "list":
        return run(["--list"] + rest, "concbench list")
    if command == "report":
        from concbench.report.cli import main as report
        return report(rest, prog="concbench report")
    print("concbench: error: unknown command %r; the commands are %s (concbench "
          "--help)" % (command, ", ".join(COMMANDS)), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

# The two commands of the README: `make bench` (the default suite, then its
# report) and `make test`. Each sets up .venv with the pinned dependencies.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RESULTS := results
ifndef OUT
OUT := $(RESULTS)/bench-$(shell date +%Y%m%d-%H%M%S).json
endif

.PHONY: bench test venv clean

bench: $(STAMP)
	@mkdir -p $(RESULTS)
	$(BIN)/python bench.py -o $(OUT) $(BENCH_ARGS)
	$(BIN)/python report.py $(OUT)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "error: $(PYTHON) is older than Python 3.10; run make PYTHON=python3.X" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[test]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) *.egg-info

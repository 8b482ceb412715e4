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

# Interpreters for `make versions`: those on PATH first, then pyenv's own
# (its shims hide the versions that are not global).
PYENV_BINS := $(wildcard $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/3.*/bin)
empty :=
space := $(empty) $(empty)
VERSIONS_PATH := $(PATH)$(if $(PYENV_BINS),:$(subst $(space),:,$(PYENV_BINS)))

.PHONY: bench test versions venv clean

bench: $(STAMP)
	@mkdir -p $(RESULTS)
	$(BIN)/python bench.py -o $(OUT) $(BENCH_ARGS)
	$(BIN)/python report.py $(OUT)

# Every Python version found runs the same preset (tox.ini), one after the
# other, then pyperf compare_to and report.py compare them.
versions: $(STAMP)
	PATH="$(VERSIONS_PATH)" $(BIN)/tox $(TOX_ARGS)

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
	rm -rf $(VENV) .tox *.egg-info

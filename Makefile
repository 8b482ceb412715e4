# The two commands of the README: `make bench` (the default suite, then its
# report, printed and as a page beside the JSON) and `make test`. Each sets up .venv with the pinned dependencies.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RESULTS := results
ifndef OUT
OUT := $(RESULTS)/bench-$(shell date +%Y%m%d-%H%M%S).json
endif

# Interpreters for `make versions`: those on PATH first, then pyenv's own
# (its shims hide the versions that are not global), free-threaded ones
# included, the newest patch release of a version first (3.13.5 before 3.13.0). FIND_LINKS: a folder of wheels built for a free-threaded Python
# whose packages publish none (by default the one kept beside the checkout
# for CPython 3.13t, if there is one), besides any the environment's
# PIP_FIND_LINKS already names (pip reads a list separated by spaces).
FIND_LINKS ?= $(sort $(PIP_FIND_LINKS) $(wildcard $(abspath ../shared/python/wheels-cp313t)))
PYENV_DIRS := $(shell ls -d $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/3.*/bin 2>/dev/null)
# A free-threaded build also installs python3.X: GIL builds come first.
PYENV_BINS := $(shell printf '%s\n' $(PYENV_DIRS) | grep -v 't/bin$$' | sort -rV) \
	$(shell printf '%s\n' $(PYENV_DIRS) | grep 't/bin$$' | sort -rV)
empty :=
space := $(empty) $(empty)
comma := ,
# The wheels as the environment's installers read them: pip a list separated
# by spaces, uv (tox's environments, tox-uv) by commas.
FIND_ENV = $(if $(FIND_LINKS),PIP_FIND_LINKS="$(FIND_LINKS)" \
	UV_FIND_LINKS="$(subst $(space),$(comma),$(strip $(FIND_LINKS)))")
VERSIONS_PATH := $(PATH)$(if $(PYENV_BINS),:$(subst $(space),:,$(PYENV_BINS)))

.PHONY: bench check docs lint scenario test versions venv clean

bench: $(STAMP)
	@mkdir -p $(RESULTS)
	$(BIN)/python bench.py -o $(OUT) $(BENCH_ARGS)
	$(BIN)/python report.py $(OUT) --html $(basename $(OUT)).html

# Every Python version found runs the same preset (tox.ini), one after the
# other, then pyperf compare_to and report.py compare them. One load server,
# started here on this venv's Python (granian), serves every version's http
# rows, so that they compare the clients' interpreters, not two servers.
versions: $(STAMP)
	PATH="$(VERSIONS_PATH)" $(FIND_ENV) \
		$(BIN)/python -m concbench.versions_server $(BIN)/tox $(TOX_ARGS)

# One of the seeds' experiments (presets.SCENARIOS), then its report:
# make scenario NAME=seeds-003-io   (DB_URL=postgresql://... runs db on a server of yours)
scenario: $(STAMP)
	@test -n "$(NAME)" || { echo "usage: make scenario NAME=<scenario> [DB_URL=...]" >&2; exit 2; }
	@mkdir -p $(RESULTS)
	$(BIN)/python bench.py --preset $(NAME) $(if $(DB_URL),--db-url $(DB_URL)) \
		--keep-earlier -o $(RESULTS)/$(NAME).json $(BENCH_ARGS)
	$(BIN)/python report.py $(RESULTS)/$(NAME).json

# The tests' tox environments (tests/test_versions.py, test_interpreters.py)
# take the free-threaded wheels from FIND_LINKS too, as `make versions` does.
test: $(STAMP)
	$(FIND_ENV) $(BIN)/python -m pytest $(PYTEST_ARGS)

# The edit-and-test loop: ruff, then the quick tier of the tests (marked
# quick: no benchmark process, no simulation, no docs build), in under a
# minute. `make test` stays the whole suite.
check: lint
	$(BIN)/python -m pytest -m quick -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

# The reference pages (docs/, Sphinx and MyST): warnings, broken links and
# references are errors. The option reference and the metadata keys are made
# from the code at every build.
docs: $(STAMP)
	$(BIN)/python -m sphinx -W -n --keep-going -q -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

venv: $(STAMP)

# Builds with the GIL also get the packages that have no free-threaded wheel.
EXTRAS = $(shell $(PYTHON) -c 'import sysconfig; print("test,dask" if sysconfig.get_config_var("Py_GIL_DISABLED") else "test,dask,gil-build")' 2>/dev/null)

$(STAMP): pyproject.toml constraints.txt setup.cfg
	@# Exit 1: an older Python; any other failure: no Python runs by that name.
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; found=$$?; \
	if [ $$found = 1 ]; then \
		echo "error: $(PYTHON) is older than Python 3.10; run make PYTHON=python3.X" >&2; exit 1; \
	elif [ $$found != 0 ]; then \
		echo "error: $(PYTHON) does not run here (exit $$found); give a Python 3.10 or newer by its path: make PYTHON=/path/to/python3.X" >&2; exit 1; \
	fi
	$(PYTHON) -m venv $(VENV)
	@# An egg-info an older install left in the top folder (setup.cfg says why).
	rm -rf *.egg-info
	@# uv (pinned, as tox's environments use it) installs the pins in a
	@# quarter of pip's time; modules compile when first imported, not here.
	@# uv reads its own settings, not pip's: behind a mirror, set
	@# UV_INDEX_URL (or UV_DEFAULT_INDEX) as well as pip's index.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile \
		-c constraints.txt uv
	$(FIND_ENV) $(BIN)/uv pip install --quiet --python $(BIN)/python \
		-c constraints.txt -e '.[$(EXTRAS)]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .tox *.egg-info docs/_build docs/_generated

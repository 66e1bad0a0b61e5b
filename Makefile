# Two commands do everything on a fresh machine with Python 3.11:
#   make run   - create .venv, install, start the dashboard on data/evals.duckdb (an empty store gets the simulated demo history); PORT=8502 picks another port
#   make test  - install what the tests need, then lint, type-check and test
#   make hosts - install the pinned agent hosts (Claude Code, Codex) into hosts/node_modules, for host/... models (docs/hosts.md)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# The browser tests drive Debian's chromium (never a downloaded browser); installed as root, or through sudo.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test lint bench clean hosts

# The checkout itself is installed editable (its build backend is pinned in requirements.txt, so no isolated build
# env is fetched): .venv/bin/evalcore runs this folder's code from any folder.
$(VENV)/.runtime: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --only-binary=:all: -r requirements.txt  # wheels only: nothing is built
	$(PY) -m pip install --quiet --no-build-isolation --no-deps --editable .
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet --only-binary=:all: -r requirements-dev.txt
	touch $@

run: $(VENV)/.runtime
	$(PY) -m evalcore dashboard --db data/evals.duckdb --port $(PORT)

lint: $(VENV)/.dev
	$(PY) -m ruff check evalcore tests bench app.py pages
	$(PY) -m ruff format --check evalcore tests bench app.py pages
	$(PY) -m mypy evalcore

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# The agent hosts evalcore runs as models, at the versions pinned in hosts/package-lock.json (npm ci: exactly those).
hosts/node_modules/.installed: hosts/package-lock.json
	cd hosts && npm ci --no-audit --no-fund --loglevel=error
	touch $@

hosts: hosts/node_modules/.installed

# Two workers: much of the suite waits on servers, browsers and installs, so two files at a time fit two cores.
test: lint $(CHROMIUM) hosts
	$(PY) -m pytest -n 2 --dist loadfile

bench: $(VENV)/.runtime
	$(PY) bench/conformance_speed.py
	$(PY) bench/concurrency.py
	$(PY) bench/matrix_speed.py
	$(PY) bench/drift_sim.py
	$(PY) bench/peer_workload.py
	$(PY) bench/first_paint.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/promptfoo/node_modules hosts/node_modules

# Two commands do everything on a fresh machine with Python 3.11:
#   make run   - create .venv, install, run the main job on the bundled defaults
#   make test  - install what the tests need, then lint, type-check and test
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test lint bench clean

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

run: $(VENV)/.runtime
	$(PY) -m evalcore conformance --reference --call-tools all
	$(PY) -m evalcore run --server reference --golden golden/tasks.yaml --models sim/lexical --runs 5 --out data/behaviour-report.json

lint: $(VENV)/.dev
	$(PY) -m ruff check evalcore tests bench app.py pages
	$(PY) -m ruff format --check evalcore tests bench app.py pages
	$(PY) -m mypy evalcore

test: lint
	$(PY) -m pytest

bench: $(VENV)/.runtime
	$(PY) bench/conformance_speed.py
	$(PY) bench/concurrency.py
	$(PY) bench/matrix_speed.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

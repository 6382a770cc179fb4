# Every target creates or reuses .venv itself, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast lint docs docs-cli bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.core

demo: $(VENV)/.core
	$(BIN)/python examples/log_search.py

lint: $(VENV)/.dev
	$(BIN)/ruff check slimtools tests examples benchmarks
	$(BIN)/ruff format --check slimtools tests examples benchmarks
	$(BIN)/mypy
	$(BIN)/mypy tests/typing

test: lint docs
	SLIMTOOLS_HYPOTHESIS=full $(BIN)/python -m pytest

# The site, built strictly (a broken link, a missing page or an unresolved API reference
# fails it) into site/, after checking that docs/cli.md is what the parsers print now.
docs: $(VENV)/.dev
	$(BIN)/python -m slimtools.cli._reference --check docs/cli.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# docs/cli.md regenerated from the argparse definitions (after changing any help text).
docs-cli: $(VENV)/.core
	$(BIN)/python -m slimtools.cli._reference docs/cli.md

# The inner loop: light property profile, no interpreter-spawning tests, no lint, one
# worker per core (each collects the suite once: about 15 s of framework imports).
test-fast: $(VENV)/.dev
	$(BIN)/python -m pytest -q -m "not subprocess" -n auto

bench: $(VENV)/.dev
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site

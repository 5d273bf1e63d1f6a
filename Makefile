# Set-up and everyday commands. `make test` and `make demo` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo play-hand test test-long warm browser-deps check lint typecheck bench bench-dashboard bench-service reference docs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $(STAMP)

# The default dataset (paohuzi/demo_data.py; skipped when already recorded), then the dashboard.
demo: $(STAMP)
	$(PY) -m paohuzi.demo_data --data data
	$(VENV)/bin/paohuzi dashboard --data data

# One seeded hand, printed move by move.
play-hand: $(STAMP)
	$(VENV)/bin/paohuzi demo

# The compiled engine and scorer are compiled once, in one process, before the workers start.
# Three workers on two cores: about a quarter of the suite waits (servers starting, a
# browser, Ray, subprocesses), and a third worker fills it; one that runs out of tests takes
# some of another's (worksteal).
test: $(STAMP) browser-deps warm
	$(PY) -m pytest -q -n 3 --dist worksteal

# The same suite with the randomized tests at their full sizes (tests/helpers/sizes.py).
test-long: $(STAMP) browser-deps warm
	PAOHUZI_TEST_LONG=1 $(PY) -m pytest -q -n 3 --dist worksteal

warm: $(STAMP)
	$(PY) -m engine.fast.warmup
	echo '{"hand": "一二三"}' | $(VENV)/bin/paohuzi score --batch - > /dev/null

# Debian's chromium and CJK fonts for the dashboard's browser test (never `playwright install`).
browser-deps:
	@(command -v chromium >/dev/null && dpkg -s fonts-noto-cjk >/dev/null 2>&1) || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-noto-cjk)

lint: $(STAMP)
	$(VENV)/bin/ruff check engine replay paohuzi dashboard bench tests
	$(VENV)/bin/ruff format --check engine replay paohuzi dashboard bench tests

typecheck: $(STAMP)
	$(VENV)/bin/mypy

check: lint typecheck test

bench: $(STAMP)
	$(PY) -m bench.throughput

# docs/REFERENCE.md at its published sizes (paohuzi report; its runs in data/reference, resumed
# when the command is run again; the wall time is stated in the document's tables).
reference: $(STAMP) warm
	$(VENV)/bin/paohuzi report --data data/reference --out docs/REFERENCE.md

# The documentation site (mkdocs.yml: docs/, the README as its home page, the CLI reference from
# the commands' --help, the Python API from docstrings) into site/; any warning fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build site *.egg-info

# The dashboard and `paohuzi stats` on a 10,000,000-hand store, summaries vs raw hands
# (bench/dashboard.py; BENCH_HANDS=… for another size, BENCH_DASHBOARD_ARGS=… for
# its other options, e.g. BENCH_HANDS=100000000 BENCH_DASHBOARD_ARGS=--no-raw).
BENCH_HANDS ?= 10000000
BENCH_DASHBOARD_ARGS ?=
bench-dashboard: $(STAMP)
	$(PY) -m bench.dashboard --hands $(BENCH_HANDS) $(BENCH_DASHBOARD_ARGS)

# `paohuzi serve` under load on loopback: /stats on a 10,000,000-hand store, a hands page,
# a 100,000-hand ndjson export, verified import (bench/service.py; BENCH_SERVICE_ARGS=…
# for its options, e.g. --hands 1000000 --clients 4 --seconds 10).
BENCH_SERVICE_ARGS ?=
bench-service: $(STAMP)
	$(PY) -m bench.service $(BENCH_SERVICE_ARGS)

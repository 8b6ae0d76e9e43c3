.PHONY: setup start test bench docs client lock wheel

# Each target is a thin wrapper; the scripts hold the logic.
# Pass pytest options with ARGS, e.g. make test ARGS="-k harness"; for start,
# ocrgw up's, e.g. make start ARGS="--port 8080"; for lock, pip-compile's,
# e.g. make lock ARGS=--upgrade.
# client: regenerates clients/python from the OpenAPI document (no server needed).
PYTHON ?= .venv/bin/python

setup:
	scripts/setup.sh

start:
	scripts/start.sh $(ARGS)

test:
	scripts/test.sh $(ARGS)

bench:
	scripts/setup.sh --bench
	.venv/bin/python -m bench

# The manual (mkdocs.yml, docs/) built into gateway/manual/, which the gateway serves at /manual.
docs:
	scripts/setup.sh
	NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict

client:
	$(PYTHON) scripts/generate_client.py

# requirements/*.txt from pyproject.toml (scripts/lock.sh); commit them with the change that needs them.
lock:
	scripts/lock.sh $(ARGS)

# dist/ocrgw-*.whl: pip install it, with an extra for the server (docs/operating/install.md).
# build/ goes first: setuptools would put a module deleted since the last build in the wheel;
# the manual is built first, so that the wheel's gateway serves it at /manual.
wheel:
	rm -rf build
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --quiet
	$(PYTHON) -m build --wheel --outdir dist .

.PHONY: setup start test bench docs client

# Each target is a thin wrapper; the scripts hold the logic.
# Pass pytest options with ARGS, e.g. make test ARGS="-k harness"; for start,
# ocrgw up's, e.g. make start ARGS="--port 8080".
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

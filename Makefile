.PHONY: setup start test bench lock wheel

# Each target is a thin wrapper; the scripts hold the logic.
# Pass pytest options with ARGS, e.g. make test ARGS="-k harness"; for start,
# ocrgw up's, e.g. make start ARGS="--port 8080"; for lock, pip-compile's,
# e.g. make lock ARGS=--upgrade.

setup:
	scripts/setup.sh

start:
	scripts/start.sh $(ARGS)

test:
	scripts/test.sh $(ARGS)

bench:
	scripts/setup.sh --bench
	.venv/bin/python -m bench

# requirements/*.txt from pyproject.toml (scripts/lock.sh); commit them with the change that needs them.
lock:
	scripts/lock.sh $(ARGS)

# dist/ocrgw-*.whl: pip install it, with an extra for the server (docs/operating/install.md).
# build/ goes first: setuptools would put a module deleted since the last build in the wheel.
wheel:
	rm -rf build
	$(or $(PYTHON),.venv/bin/python) -m build --wheel --outdir dist .

"""Generates the Python client in clients/python from the gateway's OpenAPI document (``make client``).

The document is the one ``GET /openapi.json`` serves, taken from an app
built here with the default settings and no server, no Redis and no
broker: it depends on the code only, never on the environment (remote
models, API keys), so the client does too.  openapi-python-client then
generates the ``ocrgw_client`` package with the options of
``clients/openapi-python-client.yaml``, formatted by the ruff of this
interpreter's environment.

    python scripts/generate_client.py                  # clients/python
    python scripts/generate_client.py --output DIR     # elsewhere (the test compares the two)
    python scripts/generate_client.py --spec FILE      # only the OpenAPI document, as JSON
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The generator's output changes between its releases: the checked-in client is this one's.
GENERATOR_VERSION = "0.29.1"
CONFIG = ROOT / "clients" / "openapi-python-client.yaml"
DEFAULT_OUTPUT = ROOT / "clients" / "python"


def openapi_document() -> dict:
    """``/openapi.json`` of an app with the default settings, asked of Flask's test client."""
    import redis

    from gateway import create_app
    from jobs.config import Settings
    from jobs.store import JobStore

    logging.disable(logging.WARNING)  # "no API keys configured" is about a gateway that serves, not this one
    settings = Settings()
    # A client that never connects: the document is built without a command to Redis.
    app = create_app(settings, JobStore(redis.Redis(), settings), lambda dispatches: 0)
    with app.test_client() as client:
        response = client.get("/openapi.json")
    if response.status_code != 200:
        raise SystemExit(f"GET /openapi.json answered {response.status_code}")
    return response.get_json()


def generate(output: Path) -> None:
    """The client from the document, in ``output`` (replaced)."""
    installed = version("openapi-python-client")
    if installed != GENERATOR_VERSION:
        raise SystemExit(f"openapi-python-client {installed} is installed; the client is made with {GENERATOR_VERSION}")
    bin_dir = Path(sys.executable).parent  # not resolved: a venv's python is a link to the base interpreter
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # the hooks' ruff
    with tempfile.TemporaryDirectory() as scratch:
        spec = Path(scratch) / "openapi.json"
        spec.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True))
        command = [
            str(bin_dir / "openapi-python-client"),
            "generate",
            "--path",
            str(spec),
            "--config",
            str(CONFIG),
            "--meta",
            "setup",
            "--output-path",
            str(output),
            "--overwrite",
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"openapi-python-client failed:\n{done.stdout}\n{done.stderr}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where the client goes (replaced)")
    parser.add_argument("--spec", type=Path, help="write only the OpenAPI document, as JSON, to this file")
    args = parser.parse_args(argv)
    if args.spec is not None:
        args.spec.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")
        return
    generate(args.output)
    print(f"client generated in {args.output}")


if __name__ == "__main__":
    main()

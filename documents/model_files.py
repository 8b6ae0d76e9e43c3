"""Where a learned model's file is: inside the package that ships it, or where the environment says.

The models run on ONNX Runtime come inside their packages' wheels (nothing is
downloaded at run time).  The package is found without importing it: an
import pulls in what the package's own runner needs (YAML, its logging),
which a worker that only loads the file does not.  An environment variable
may name another file instead: how an operator tries another model, and how
a test makes one fail for real (a corrupt file).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

from jobs.errors import EngineUnavailable


def packaged_model(
    package: str,
    file: Path,
    *,
    needed_for: str,
    override: str | None = None,
    error: Callable[[str], Exception] = EngineUnavailable,
) -> Path:
    """The model file ``file`` (relative to ``package``'s folder), or the one ``override``'s variable names;
    ``error`` (raised) says that ``needed_for`` needs the package when it or its file is missing."""
    named = os.environ.get(override) if override else None
    if named:
        return Path(named)
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise error(f"{needed_for} needs the {package.replace('_', '-')} package on this worker")
    path = Path(spec.origin).parent / file
    if not path.is_file():
        raise error(f"the {package.replace('_', '-')} package on this worker has no model at {path}")
    return path

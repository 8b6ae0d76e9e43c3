"""The coordinator stands beside the gateway, not on it: what both render (a job's view, its links) is below both.

Read from the source, every import of every module, those inside a function
included, so that no import placed out of sight brings the gateway (and
Flask with it) into the coordinator's processes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def imported_packages(package: str) -> dict[str, set[str]]:
    """module path -> the top-level packages it imports."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        out[str(path.relative_to(ROOT))] = names
    return out


@pytest.mark.parametrize(
    ("package", "above"),
    [("coordinator", {"gateway", "cli"}), ("jobs", {"gateway", "coordinator", "workers", "cli"})],
)
def test_no_module_imports_a_package_above_its_own(package, above):
    offending = {module: names & above for module, names in imported_packages(package).items() if names & above}

    assert offending == {}

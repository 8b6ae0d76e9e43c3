"""The lock files in requirements/ still answer pyproject.toml: every requirement of the package and
its extras is pinned there, at a version its specifier allows. A requirement added without
``make lock`` fails here, naming it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.harness import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
#: The extras each lock holds besides the package's own requirements, as scripts/lock.sh compiles them.
LOCKED_EXTRAS = {"cli.txt": [], "server.txt": ["server", "docs", "otel"], "test.txt": list(EXTRAS)}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)


def pins(lock: Path) -> dict[str, str]:
    return {canonicalize_name(name): version for name, version in _PIN.findall(lock.read_text())}


def required_by_pyproject(lock: str) -> list[str]:
    return PROJECT["dependencies"] + [line for extra in LOCKED_EXTRAS[lock] for line in EXTRAS[extra]]


def unlocked(requirements: list[str], lock: str) -> list[str]:
    pinned = pins(ROOT / "requirements" / lock)
    wrong = []
    for line in requirements:
        requirement = Requirement(line)
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            wrong.append(f"{line} (locked: {version})")
    return wrong


@pytest.mark.parametrize("lock", list(LOCKED_EXTRAS))
def test_each_lock_pins_what_pyproject_requires(lock):
    assert unlocked(required_by_pyproject(lock), lock) == [], (
        f"requirements/{lock} is behind pyproject.toml: run make lock"
    )


def test_the_test_lock_runs_the_servers_versions():
    server, test = pins(ROOT / "requirements" / "server.txt"), pins(ROOT / "requirements" / "test.txt")
    assert {name: test.get(name) for name in server} == server

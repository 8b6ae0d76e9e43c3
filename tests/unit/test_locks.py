"""The lock files in requirements/ still answer pyproject.toml: every requirement of the package and
its extras is pinned there, at a version its specifier allows. A requirement added without
``make lock`` fails here, naming it.

And each lock installs on every CPython 3.11 (pyproject.toml allows any): pip-compile resolves for
the Python that runs it, so a dependency that a package needs only on older 3.11 releases (a marker
such as ``python_full_version < "3.11.3"``) would be missing from it, and pip's hash-checking mode
refuses to install a lock that lacks one."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.harness import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
#: The extras each lock holds besides the package's own requirements, as scripts/lock.sh compiles them.
LOCKED_EXTRAS = {"cli.txt": [], "server.txt": ["server", "docs", "otel"], "test.txt": list(EXTRAS)}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)


def python_3_11(patch: int) -> dict[str, str]:
    """The marker environment of CPython 3.11.<patch> on Linux (this machine's architecture)."""
    here = {name: str(value) for name, value in default_environment().items()}
    return here | {
        "python_full_version": f"3.11.{patch}",
        "python_version": "3.11",
        "implementation_name": "cpython",
        "implementation_version": f"3.11.{patch}",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
        "sys_platform": "linux",
        "platform_system": "Linux",
    }


#: Every CPython 3.11 release, 3.11.0 first (Debian 12's python3 is 3.11.2).
PYTHONS_3_11 = [python_3_11(patch) for patch in range(20)]


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


def applies(requirement: Requirement, extras: set[str]) -> bool:
    """Whether some 3.11 needs it, for a distribution installed with these extras (or none)."""
    if requirement.marker is None:
        return True
    return any(
        requirement.marker.evaluate(python | {"extra": extra}) for python in PYTHONS_3_11 for extra in {"", *extras}
    )


def needs(distribution: str, extras: set[str]) -> list[Requirement]:
    """What a distribution, as installed here, requires on some 3.11 with these extras."""
    lines = importlib.metadata.requires(distribution) or []
    return [requirement for requirement in map(Requirement, lines) if applies(requirement, extras)]


def installed_as_pinned(pinned: dict[str, str]) -> list[str]:
    """The pinned distributions whose metadata this environment has: those installed at the pinned version."""
    names = []
    for name, version in pinned.items():
        try:
            if importlib.metadata.version(name) == version:
                names.append(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return names


def extras_asked(lock: str, names: list[str]) -> dict[str, set[str]]:
    """The extras the lock installs each distribution with: those that pyproject.toml and the locked
    packages ask for (``celery[redis]``), and those that these extras ask for in turn."""
    asked: dict[str, set[str]] = {name: set() for name in names}
    requests = [Requirement(line) for line in required_by_pyproject(lock)]
    requests += [requirement for name in names for requirement in needs(name, set())]
    while requests:
        requirement = requests.pop()
        name = canonicalize_name(requirement.name)
        extras = {canonicalize_name(extra) for extra in requirement.extras}
        if name in asked and not extras <= asked[name]:
            asked[name] |= extras
            requests.extend(needs(name, asked[name]))
    return asked


def unpinned_needs(lock: str) -> list[str]:
    """What a package of the lock needs on some 3.11 and the lock does not pin, or pins at a version it refuses."""
    pinned = pins(ROOT / "requirements" / lock)
    names = installed_as_pinned(pinned)
    assert names, f"none of requirements/{lock} is installed here at its pinned version: nothing to read"
    asked = extras_asked(lock, names)
    wrong = []
    for name in names:
        for requirement in needs(name, asked[name]):
            version = pinned.get(canonicalize_name(requirement.name))
            if version is None or not requirement.specifier.contains(version, prereleases=True):
                extras = f"[{','.join(sorted(asked[name]))}]" if asked[name] else ""
                wrong.append(f"{requirement} (for {name}{extras}; locked: {version})")
    return wrong


@pytest.mark.parametrize("lock", list(LOCKED_EXTRAS))
def test_each_lock_pins_what_its_packages_need_on_every_python_3_11(lock):
    assert unpinned_needs(lock) == [], (
        f"requirements/{lock} would not install on every Python 3.11: require it in pyproject.toml, then make lock"
    )

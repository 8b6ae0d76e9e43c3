"""Which optional parts of ocrgw are installed here, read from the installed package's own metadata.

``pip install ocrgw`` gives the command line only (requests, click, rich): enough to talk to a
gateway. The commands that run the server itself (``ocrgw up``, ``ocrgw config``) need the
``server`` extra; they ask :func:`require` first, so a missing package is one clear line that
names the extra to install, never an ImportError from deep inside Celery or Flask.
"""

from __future__ import annotations

import re
import shlex
import sys
from importlib import metadata

DISTRIBUTION = "ocrgw"
SERVER = "server"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


class MissingExtra(Exception):
    """A command needs an extra that is not (wholly) installed: what to install, in one sentence."""


def requirements_of(extra: str, requirements: list[str]) -> list[str]:
    """The distribution names that ``extra`` adds, from requirement lines as the package's metadata has them."""
    names = []
    for line in requirements:
        requirement, _, marker = line.partition(";")
        name = _NAME.match(requirement)
        if name is not None and extra in _EXTRA_MARKER.findall(marker):
            names.append(name.group(1))
    return names


def missing_from(extra: str) -> list[str]:
    """The distributions of ``extra`` that are not installed; none when ocrgw itself is not installed
    (it runs from a source checkout, whose environment is the developer's to set up)."""
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    missing = []
    for name in requirements_of(extra, declared):
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def install_hint(extra: str) -> str:
    """The commands that install ``extra`` into this very environment, pip upgraded first.

    Debian 12's own pip (23.0) is older than the extras' packages were made for, and may fail to
    resolve them where a current pip does; upgrading it first costs a few seconds.
    """
    python = shlex.quote(sys.executable)
    return f"{python} -m pip install --upgrade pip && {python} -m pip install 'ocrgw[{extra}]'"


def require(extra: str, command: str) -> None:
    """Raises :class:`MissingExtra` naming what to install when ``extra`` is not all here."""
    missing = missing_from(extra)
    if missing:
        raise MissingExtra(
            f"`ocrgw {command}` needs the {extra} packages, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {install_hint(extra)}"
        )

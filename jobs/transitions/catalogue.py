"""Where the store finds its transitions: every module of a folder that declares one is an entry.

An entry is a module ``<name>.py`` with its script ``<name>.lua`` beside it.
The module declares the script's spec, a ``Transition`` named ``<name>``
(its keys, its arguments, its reply), and the Python call that fills them
and runs it (``call``, taking the store's ``StoreContext``).  Nothing lists
the entries by hand: ``discover`` imports each module of the folder and
keeps the spec it declares, so a new transition is one new entry (and its
moves in the state machine's table, jobs/state_machine.py).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from jobs.transitions.spec import Transition

#: The package whose modules are the house's entries.
ENTRIES = "jobs.transitions"


def discover(package: str) -> tuple[Transition, ...]:
    """The specs the modules of ``package`` declare, by name: a module with none (a helper) is no entry."""
    found = []
    for module_info in sorted(pkgutil.iter_modules(importlib.import_module(package).__path__), key=lambda m: m.name):
        if module_info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, Transition) and value.name == module_info.name:
                found.append(value)
                break
    return tuple(found)


@cache
def discovered() -> tuple[Transition, ...]:
    """The house's entries (those of ``ENTRIES``), found once per process."""
    return discover(ENTRIES)

"""The transitions: one entry each, found by themselves (``catalogue.discover``).

An entry is a module ``<name>.py`` holding the script's spec (``<NAME>``,
a ``Transition``: keys, arguments, reply) and its Python call (``call``,
which fills the keys and arguments and runs it through the store's
``StoreContext``), with the script ``<name>.lua`` beside it.  Each runs on
Redis as a function, in a library of its own (``Transition.source``),
loaded once per server where it is missing (``Scripts``).

``Scripts(client, keyspace).run(CLAIM, keys={...}, args={...})`` packs the named keys
and arguments in the spec's order, calls the function (FCALL; its library
loaded when the server answers that it is missing; it also works in
pipelines) and decodes the reply into the spec's dataclass.
"""

from __future__ import annotations

from jobs.transitions.catalogue import discovered
from jobs.transitions.scripts import LOAD_ATTEMPTS, Scripts
from jobs.transitions.spec import Dispatch, Transition


def __getattr__(name: str) -> tuple[Transition, ...]:
    """``TRANSITIONS``, every entry of this package, found on first use: the entries import modules (the
    records, the settings) that import this package's spec, so they cannot all be imported with it."""
    if name == "TRANSITIONS":
        return discovered()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LOAD_ATTEMPTS", "TRANSITIONS", "Dispatch", "Scripts", "Transition"]

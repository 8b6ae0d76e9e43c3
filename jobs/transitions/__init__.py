"""The transitions: one Lua script each (``<name>.lua``), described by its spec beside it
(``<name>.py``, defining ``<NAME>``), listed once in ``TRANSITIONS`` and registered once per client.

``Scripts(client).run(CLAIM, keys={...}, args={...})`` packs the named keys
and arguments in the spec's order, calls the script by SHA (redis-py's
``Script``: EVALSHA, reloaded on NOSCRIPT; it also works in pipelines) and
decodes the reply into the spec's dataclass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import NoScriptError

from jobs.transitions.cancel import CANCEL
from jobs.transitions.claim import CLAIM
from jobs.transitions.claim_next import CLAIM_NEXT
from jobs.transitions.claim_webhook import CLAIM_WEBHOOK
from jobs.transitions.complete import COMPLETE
from jobs.transitions.create import CREATE
from jobs.transitions.expire import EXPIRE
from jobs.transitions.heartbeat import HEARTBEAT
from jobs.transitions.progress import PROGRESS
from jobs.transitions.reclaim import RECLAIM
from jobs.transitions.record_pdf import RECORD_PDF
from jobs.transitions.record_webhook import RECORD_WEBHOOK
from jobs.transitions.redrive import REDRIVE
from jobs.transitions.release import RELEASE
from jobs.transitions.republish import REPUBLISH
from jobs.transitions.retry import RETRY
from jobs.transitions.set_cap import SET_CAP
from jobs.transitions.spec import Dispatch, Transition
from jobs.transitions.unlock_sweep import UNLOCK_SWEEP

TRANSITIONS: tuple[Transition, ...] = (
    CREATE,
    CLAIM,
    CLAIM_NEXT,
    HEARTBEAT,
    PROGRESS,
    COMPLETE,
    RETRY,
    RECLAIM,
    REPUBLISH,
    RELEASE,
    UNLOCK_SWEEP,
    CANCEL,
    SET_CAP,
    REDRIVE,
    CLAIM_WEBHOOK,
    RECORD_WEBHOOK,
    EXPIRE,
    RECORD_PDF,
)


#: Calls of a script that meet NOSCRIPT before giving up.  redis-py loads a script the server does
#: not know and calls it again, but once only: a Redis that restarted between that load and the
#: call (a restart forgets every script) answers NOSCRIPT again.  A NOSCRIPT reply means the script
#: did not run at all, so calling it again is always safe.
NOSCRIPT_ATTEMPTS = 3


class Scripts:
    """The transitions registered on one Redis client."""

    def __init__(self, client: Redis):
        #: The registered scripts by transition name (redis-py ``Script`` objects).
        self.by_name = {t.name: client.register_script(t.source()) for t in TRANSITIONS}

    def run(self, transition: Transition, keys: Mapping[str, str], args: Mapping[str, Any]) -> Any:
        packed_keys, packed_args = transition.pack(keys, args)
        script = self.by_name[transition.name]
        for attempt in range(1, NOSCRIPT_ATTEMPTS + 1):
            try:
                return transition.decode(script(keys=packed_keys, args=packed_args))
            except NoScriptError:
                if attempt == NOSCRIPT_ATTEMPTS:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def queue(self, pipe: Pipeline, transition: Transition, keys: Mapping[str, str], args: Mapping[str, Any]) -> None:
        """Adds a call to ``pipe``; decode its raw reply with ``transition.decode``."""
        packed_keys, packed_args = transition.pack(keys, args)
        self.by_name[transition.name](keys=packed_keys, args=packed_args, client=pipe)


__all__ = ["TRANSITIONS", "Dispatch", "Scripts", "Transition"]

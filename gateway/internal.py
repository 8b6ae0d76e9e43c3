"""Requests the gateway makes of itself: a dashboard page asks the API in-process (``gateway.dashboard``).

Such a request is a part of the page's: its time is in the page's time, its
failure in the page's status.  So it is marked in its WSGI environ, and the
observers leave it out: ``gateway.http_metrics`` counts and times the page
alone, and tracing (``observability.tracing``) gives it no span of its own
(what it does, its Redis commands, shows under the page's span).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The environ key that marks a request the gateway made of itself.
ENVIRON_KEY = "ocrgw.internal"


def is_internal(environ: Mapping[str, Any]) -> bool:
    return bool(environ.get(ENVIRON_KEY))

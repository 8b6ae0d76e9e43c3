"""API keys: who a request comes from (its tenant), before any route reads or writes a job.

A request names its key as ``Authorization: Bearer <key>``.  The gateway
keeps only each key's sha256 (``jobs.api_keys``): the presented key is
hashed and compared with every configured digest by ``hmac.compare_digest``,
all of them every time, so how long a check takes says nothing about which
digest, or how much of one, a guess matched.  A missing or unknown key is
``401`` with ``WWW-Authenticate: Bearer`` (RFC 6750).

With no key configured the gateway serves one tenant, ``default``, to
anyone (and says so in its log at start).  The probes and the API's own
document (``/healthz``, ``/readyz``, ``/openapi.json``, ``/docs`` and its
files), the dashboard's pages (``/ui``, whose data comes from the API
with the caller's key), and the manual (``/manual``), never ask for a key.  Routes read who is asking with
``current_principal()``.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from flask import Flask, g, request

from gateway.problems import Problem
from jobs.api_keys import ApiKey, digest_of, tenant_weights
from jobs.ids import DEFAULT_TENANT
from jobs.records import Owner

log = logging.getLogger(__name__)

#: The problems of a request without a valid key: every protected operation documents them.
AUTH_PROBLEMS = ("missing_api_key", "invalid_api_key")
#: The endpoints a client reaches with no key (docs/security/api-keys.md lists them): the probes, the OpenAPI
#: document, Swagger UI and its files, and those below.
OPEN_ENDPOINTS = frozenset(
    {"api.healthz", "api.readyz", "api-docs.openapi_json", "api-docs.openapi_swagger_ui", "swagger_ui_asset"}
    # The dashboard's pages and files hold no data of their own: a page gets it from the
    # API with the caller's own Authorization header, so a page without a key shows none.
    | {"ui.job_list", "ui.job", "ui.submit_form", "ui.workers", "ui.static"}
    # Counts per model and status, no job's data: scraped like the probes, and kept off the
    # public network like them (see Metrics, logs and Flower).
    | {"metrics"}
    # The manual: the docs site, which every problem's type points into.
    | {"manual"}
)
SECURITY_SCHEME = "bearerAuth"
_REALM = 'Bearer realm="ocrgw"'


@dataclass(frozen=True)
class Principal:
    """Who a request comes from: its tenant, its key's id (sha256 prefix; '' without keys), its key's policies."""

    tenant: str
    key_id: str
    policies: frozenset[str] = frozenset()
    weight: int = 1  # its tenant's share of each lane's turns
    interactive_max_inflight: int | None = None  # None: OCRGW_INTERACTIVE_MAX_INFLIGHT

    @property
    def owner(self) -> Owner:
        """What a job this principal submits records of it."""
        return Owner(self.tenant, self.key_id, self.weight, self.interactive_max_inflight)


#: Everyone, when no key is configured.
ANYONE = Principal(DEFAULT_TENANT, "")


class KeyTable:
    """The configured keys, by digest; ``open`` when there are none."""

    def __init__(self, keys: Sequence[ApiKey]):
        weights = tenant_weights(keys)
        self._entries = [
            (
                bytes.fromhex(k.digest),
                Principal(k.tenant, k.key_id, k.policies, weights[k.tenant], k.interactive_max_inflight),
            )
            for k in keys
        ]

    @property
    def open(self) -> bool:
        return not self._entries

    def principal_of(self, presented: bytes) -> Principal | None:
        """Whose key ``presented`` is, or None; compares with every entry, whatever matched."""
        digest = bytes.fromhex(digest_of(presented))
        found = None
        for entry_digest, principal in self._entries:
            if hmac.compare_digest(digest, entry_digest):
                found = principal
        return found

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization`` header; ``401`` for a missing or unknown key."""
        if self.open:
            return ANYONE
        presented = bearer_credentials(authorization)
        if presented is None:
            raise Problem(
                "missing_api_key",
                "Send an API key as Authorization: Bearer <key>.",
                headers={"WWW-Authenticate": _REALM},
            )
        principal = self.principal_of(presented)
        if principal is None:
            raise Problem(
                "invalid_api_key",
                "The API key is not valid.",
                headers={"WWW-Authenticate": f'{_REALM}, error="invalid_token"'},
            )
        return principal


def install(app: Flask, keys: Sequence[ApiKey]) -> KeyTable:
    """Checks every request's key before its route runs, except on the open endpoints."""
    table = KeyTable(keys)
    if table.open:
        log.warning("no API keys configured: anyone who reaches this gateway is tenant %r", DEFAULT_TENANT)

    @app.before_request
    def authenticate() -> None:
        if request.endpoint in OPEN_ENDPOINTS:
            return
        g.principal = table.authenticate(request.headers.get("Authorization"))

    return table


def current_principal() -> Principal:
    """Who the request being served comes from (set before its route runs)."""
    principal = g.get("principal")
    if principal is None:
        raise RuntimeError("no principal: this endpoint is open, or the request was not authenticated")
    return principal


def bearer_credentials(authorization: str | None) -> bytes | None:
    """What an ``Authorization: Bearer <credentials>`` header presents; None for none, or another scheme."""
    scheme, _, credentials = (authorization or "").strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials:
        return None
    # A header's text is its bytes read as latin-1 (WSGI): those bytes are what was sent.
    return credentials.encode("latin-1", errors="replace")

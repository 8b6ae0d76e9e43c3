"""Webhook delivery: the Celery task that POSTs a terminal job's view to its callback_url.

The sweep claims due webhooks (``jobs.webhooks``) and hands each claim over
as a message on the ``webhooks`` queue (``hand_off``).  That queue has its
own consumer, a Celery worker with a thread pool (the Procfile's
``webhooks`` process): a delivery spends its time waiting on a receiver,
which threads do cheaply, and a slow or dead receiver then holds one of
those threads for at most ``OCRGW_WEBHOOK_TIMEOUT``, never the
coordinator, whose sweep keeps its single solo process to itself.

Each delivery renders the document ``GET /jobs/{id}`` answers (for a
parent: its default view, with the first page of its children), with the
view code the gateway answers with and no Flask app (``jobs.public_view``, its
URLs from ``jobs.links``), signs it with its tenant's secret (``jobs.webhook_secrets``),
POSTs it once and records the answer; the store decides whether and when to
try again.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from coordinator import delivery
from jobs import public_view, webhook_secrets, webhooks
from jobs.config import Settings
from jobs.errors import JobNotFound
from jobs.ids import DEFAULT_TENANT
from jobs.links import Links
from jobs.store import JobStore
from jobs.webhooks import Answer, WebhookClaim
from observability import metrics
from workers.celery_app import WEBHOOK_QUEUE, WEBHOOK_TASK, app, settings

log = logging.getLogger(__name__)


class Deliverer:
    """Delivers claimed webhooks for one process; safe to share between its threads."""

    def __init__(self, store: JobStore, clock: Callable[[], float] = time.time):
        self.store = store
        self.settings: Settings = store.settings
        self.queries = store.queries
        self.clock = clock
        # The URLs inside a view, as a gateway mounted at the root answers them.
        self.links = Links()
        self._warn_of_unsigned_tenants()

    def _warn_of_unsigned_tenants(self) -> None:
        settings = self.settings
        if not settings.webhook_secret and not settings.webhook_secrets:
            log.warning(
                "OCRGW_WEBHOOK_SECRET is not set: webhooks are sent without %s and %s",
                delivery.SIGNATURE_HEADER,
                delivery.STANDARD_SIGNATURE_HEADER,
            )
            return
        # Without API keys every job is the default tenant's.
        tenants = {key.tenant for key in settings.api_keys} or {DEFAULT_TENANT}
        unsigned = sorted(
            tenants
            - {tenant for tenant, _ in settings.webhook_secrets}
            - ({DEFAULT_TENANT} if settings.webhook_secret else set())
        )
        if unsigned:
            log.warning(
                "webhooks of %s go out unsigned: OCRGW_WEBHOOK_SECRETS_FILE has no secret for them",
                ", ".join(unsigned),
            )

    def secret(self, tenant: str) -> str:
        """The secret of the tenant whose webhook it is; '' for none."""
        return webhook_secrets.secret_for(self.settings.webhook_secrets, self.settings.webhook_secret, tenant)

    def deliver(self, job_id: str, attempt: int) -> str:
        """Sends attempt ``attempt`` of the job's webhook and records its answer; returns what follows."""
        record = self.queries.get(job_id)
        if record is None:
            return "gone"
        if not webhooks.is_current(record, attempt):
            # Its claim ran out on the queue and a later attempt was claimed: that one sends.
            log.info("webhook of %s: attempt %d is stale, skipped", job_id, attempt)
            return "stale"
        try:
            body = self.body(record)
            tenant = webhooks.tenant_of(self.store, job_id, record)
            secret, message_id = self.secret(tenant), webhooks.message_id(job_id, record)
            answer = delivery.post(
                webhooks.callback_url(record),
                body,
                delivery.headers(body, attempt, secret, int(self.clock()), message_id),
                timeout=self.settings.webhook_timeout,
                allow_private=bool(self.settings.webhook_allow_private),
                tenant=tenant,
            )
        except Exception as error:  # a bug: recorded like any failed attempt, so that it too is given up in time
            log.exception("webhook of %s, attempt %d: could not be sent", job_id, attempt)
            # The tenant reads the event: a fixed text, since the exception's could name internal hosts.
            answer = Answer(
                None,
                delivery.AttemptError.INTERNAL_ERROR,
                delivery.INTERNAL_ERROR,
                detail=f"{type(error).__name__}: {error}",
            )
        try:
            recorded = webhooks.record(self.store, job_id, attempt, answer)
        except JobNotFound:
            return "gone"
        if recorded.lag_seconds is not None:
            metrics.webhook_delivered(recorded.lag_seconds)
        level = logging.INFO if answer.delivered else logging.WARNING
        log.log(
            level,
            "webhook of %s, attempt %d: %s -> %s",
            job_id,
            attempt,
            answer.detail or answer.error or answer.status,
            recorded.outcome.value,
        )
        return recorded.outcome.value

    def view(self, record: dict[str, str]) -> dict[str, Any]:
        """The job's view as ``GET /jobs/{id}`` answers it by default, dumped through the schema that documents it."""
        return public_view.public_job(self.queries, record, self.links)

    def body(self, record: dict[str, str]) -> bytes:
        return json.dumps(self.view(record), separators=(",", ":")).encode()


def hand_off(claims: list[WebhookClaim]) -> int:
    """One message per claim on the webhooks queue; returns how many were sent.

    Never raises: a claim whose message is lost runs out and is claimed again.
    A message expires unrun once its attempt's whole timeout no longer fits
    in its claim (``OCRGW_WEBHOOK_CLAIM_MARGIN`` after the claim): one that
    started later could still be sending when the claim ran out and the
    sweep claimed the next attempt, two at once against the tenant's cap.
    """
    if not claims:
        return 0
    expires = settings.webhook_claim_margin  # the claim window less the attempt's timeout
    try:
        with app.producer_or_acquire() as producer:
            for claim in claims:
                app.send_task(
                    WEBHOOK_TASK,
                    args=[claim.job_id, claim.attempt],
                    queue=WEBHOOK_QUEUE,
                    producer=producer,
                    expires=expires,
                )
    except Exception:
        log.exception("could not hand %d webhooks over; they are claimed again when their claims run out", len(claims))
        return 0
    return len(claims)


_deliverer: Deliverer | None = None
_deliverer_pid: int | None = None
_deliverer_lock = threading.Lock()


def deliverer() -> Deliverer:
    """The process's deliverer, built on first use (after any fork), once for all its threads."""
    global _deliverer, _deliverer_pid
    with _deliverer_lock:
        if _deliverer is None or _deliverer_pid != os.getpid():
            _deliverer = Deliverer(JobStore.from_settings(settings))
            _deliverer_pid = os.getpid()
        return _deliverer


@app.task(name=WEBHOOK_TASK, ignore_result=True, acks_late=False)
def deliver(job_id: str, attempt: int) -> str:
    # acks_late off: an attempt whose deliverer dies is claimed again by the sweep once its claim runs out.
    outcome = deliverer().deliver(job_id, attempt)
    metrics.webhook_attempted(outcome)
    return outcome

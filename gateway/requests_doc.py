"""How POST /jobs is documented: one operation, three request shapes, and the webhook it may lead to.

The route reads its body itself (strict JSON, raw documents of any
accepted type), so its request body is described here rather than by a
``@arguments`` decorator: JSON as a job or a group (``gateway.schemas``),
and every content type a model accepts as the raw document.

The webhook (``coordinator.webhooks``, ``coordinator.delivery``) is an
OpenAPI callback of the submission, one per place a ``callback_url`` is
given: the JSON job's, the group's (``fanout.callback_url``), the raw
document's query.  Its headers are named here, not imported, so that the
gateway loads no Celery; a test keeps them equal to what the deliverer sends.
"""

from __future__ import annotations

from gateway.schemas import RawQuerySchema
from jobs.registry import MODELS

RAW_TYPES = sorted({t for m in MODELS.values() for t in m.content_types})

#: The headers of a webhook request, as ``coordinator.delivery.headers`` sends them.
WEBHOOK_HEADERS = {
    "webhook-id": (
        True,
        "Standard Webhooks' message id, `msg_<job id>_<n>`: the same on every attempt at one ending of the job, "
        "so a receiver can drop a repeat; a redriven group that ends again sends a new one.",
    ),
    "webhook-timestamp": (True, "Unix seconds when the attempt was signed."),
    "webhook-signature": (
        False,
        'Standard Webhooks\' `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with '
        "the tenant's secret (a `whsec_<base64>` secret: its bytes). Absent when the tenant has no secret.",
    ),
    "X-Ocrgw-Signature": (
        False,
        '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the text of the same secret. '
        "Absent when the tenant has no secret.",
    ),
    "X-Ocrgw-Attempt": (True, "The attempt's number, from 1."),
}
#: Where a submission names its callback: a JSON job, a JSON group, a raw document's query.
CALLBACK_URL_EXPRESSIONS = (
    "{$request.body#/callback_url}",
    "{$request.body#/fanout/callback_url}",
    "{$request.query.callback_url}",
)
_WEBHOOK = {
    "post": {
        "summary": "The job's view, POSTed once the job is terminal",
        "description": (
            "When a job with a `callback_url` becomes terminal (completed, failed or cancelled; a redriven "
            "group again each time it ends), ocrgw POSTs its view, the document `getJob` answers by default "
            "(a group's with the first page of its children), to that URL. Each child of a JSON group may "
            "name its own `callback_url` too (`fanout.children[i].callback_url`): its own webhook, the same "
            "request. A group (or a split PDF) whose `webhook_events` names `child.completed` sends each child's "
            "view to its `callback_url` as the child ends, and its own view only if `job.completed` is named "
            "too (the default is `job.completed` alone).\n\n"
            "Delivery is at least once: verify the signature over the exact bytes received, refuse a "
            "timestamp too far from now, and drop a `webhook-id` already seen. Only a `2xx` answer ends it; "
            "anything else is tried again after `OCRGW_WEBHOOK_BACKOFF`, doubling up to "
            "`OCRGW_WEBHOOK_BACKOFF_MAX`, until `OCRGW_WEBHOOK_GIVE_UP_AFTER` after the job ended. Every "
            "attempt is an event of the job (`listJobEvents`, `operation: webhook`)."
        ),
        "security": [],  # ocrgw signs the request; it sends no API key
        "parameters": [
            {"in": "header", "name": name, "required": required, "description": text, "schema": {"type": "string"}}
            for name, (required, text) in WEBHOOK_HEADERS.items()
        ],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "oneOf": [
                            {"$ref": "#/components/schemas/SingleJobView"},
                            {"$ref": "#/components/schemas/ParentView"},
                        ]
                    }
                }
            },
        },
        "responses": {
            "2XX": {"description": "Delivered: no other attempt is made. The answer's body is not read."},
            "default": {
                "description": (
                    "Not delivered, tried again later: any other status (a `3xx` too: redirects are not "
                    "followed), or no status line and headers within `OCRGW_WEBHOOK_TIMEOUT` of the attempt's "
                    "start (the host name's lookup included), or no connection."
                )
            },
        },
    }
}
#: The submission's callbacks: the same webhook, wherever its URL was given.
WEBHOOK_CALLBACKS = {"jobTerminal": {expression: _WEBHOOK for expression in CALLBACK_URL_EXPRESSIONS}}

SUBMIT_DOC = {
    "description": (
        "Three shapes, told apart by the content type and the body:\n\n"
        "1. **A raw document**: the body is the file, `Content-Type` its type. Query: `model` "
        "(default `tesseract`), `doc_hash` (default: the body's sha256), `pages`.\n"
        "2. **A JSON job** (`Job`).\n"
        "3. **A JSON fan-out group** (`Group`): JSON with a top-level `fanout`.\n\n"
        "**PDF split.** A PDF with `split_pages` (the query of a raw PDF, or a JSON job's field) becomes a "
        "fan-out group of page ranges, `split_pages` pages a child, at most `max_parallel` running at once "
        "(0 or absent: no cap). The page count is read at submission: a PDF that cannot be read is "
        "`invalid_document`, one over `OCRGW_MAX_PAGES` pages `too_many_pages`, one that makes more than "
        "`OCRGW_MAX_CHILDREN` children `too_many_children`, and `split_pages` on anything but a PDF "
        "`invalid_field`. Each child stores its own pages only and numbers them in the whole document "
        "(`options.first_page`).\n\n"
        "The whole submission is validated before anything is stored: a rejected request stores "
        "nothing, and a group with one bad child is rejected whole, the problem naming it "
        "(`child_index`). With `Idempotency-Key`, the same request again answers the same job "
        "(`Idempotent-Replayed: true`); the same key with another request is `idempotency_key_reused`."
    ),
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"oneOf": [{"$ref": "#/components/schemas/Job"}, {"$ref": "#/components/schemas/Group"}]},
            },
            **{media: {"schema": {"type": "string", "format": "binary"}} for media in RAW_TYPES},
        },
    },
    "callbacks": WEBHOOK_CALLBACKS,
    "parameters": [
        {"in": "query", "schema": RawQuerySchema},
        {
            "in": "header",
            "name": "Idempotency-Key",
            "required": False,
            "description": "1 to 255 visible ASCII characters; kept 24 hours (OCRGW_IDEMPOTENCY_TTL).",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x21-\\x7e]+$"},
        },
    ],
}

SUBMIT_HEADERS = {
    "Location": {"description": "The job's URL.", "schema": {"type": "string"}},
    "Idempotent-Replayed": {
        "description": "`true` when this answers an earlier request with the same key.",
        "schema": {"type": "string", "enum": ["true"]},
    },
}

"""How POST /jobs is documented: one operation, three request shapes.

The route reads its body itself (strict JSON, raw documents of any
accepted type), so its request body is described here rather than by a
``@arguments`` decorator: JSON as a job or a group (``gateway.schemas``),
and every content type a model accepts as the raw document.
"""

from __future__ import annotations

from gateway.schemas import RawQuerySchema
from jobs.registry import MODELS

RAW_TYPES = sorted({t for m in MODELS.values() for t in m.content_types})

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

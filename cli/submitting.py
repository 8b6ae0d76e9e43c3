"""What ``ocrgw submit`` sends: one of the three shapes of ``POST /jobs``, built from files.

* One file, no options: the file is the body (a raw document), its type
  the ``Content-Type``; with ``--split-pages`` the gateway splits it.
* One file with options: a JSON job (a raw document's query cannot carry
  options).
* Several files: a JSON fan-out group, one child per file, each payload
  base64.

A file's type is read from its first bytes when they say it (PNG, JPEG,
TIFF, PDF), else guessed from its name; ``--content-type`` overrides both.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The signatures of the document types the engines read.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"%PDF-", "application/pdf"),
)
#: A group's children must name a model; the gateway's own default applies to a single job only.
GROUP_DEFAULT_MODEL = "tesseract"

#: What ``--webhook-event`` may name: the gateway's ``webhook_events`` (the CLI imports nothing of the server).
WEBHOOK_EVENTS = ("job.completed", "child.completed")


class SubmitError(Exception):
    """The files and flags given cannot make a submission; said before anything is sent."""


@dataclass(frozen=True)
class Request:
    """One POST /jobs: a raw body with its query, or a JSON document."""

    headers: dict[str, str]
    json: dict[str, Any] | None = None
    body: bytes = b""
    content_type: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Document:
    path: Path
    data: bytes
    content_type: str


def content_type_of(path: Path, data: bytes) -> str | None:
    """The media type of a document: its magic bytes first, then its name."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed


def read_documents(paths: list[Path], content_type: str | None) -> list[Document]:
    documents = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise SubmitError(f"cannot read {path}: {error.strerror or error}") from None
        media_type = content_type or content_type_of(path, data)
        if media_type is None:
            raise SubmitError(f"cannot tell the type of {path}; name it with --content-type")
        documents.append(Document(path, data, media_type))
    return documents


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a VALUE that reads as JSON (``true``, ``3``, ``"x"``) is taken as such, else as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SubmitError(f"--option takes KEY=VALUE, not {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def build(
    documents: list[Document],
    *,
    model: str | None,
    max_parallel: int | None,
    split_pages: int | None,
    options: dict[str, Any],
    callback_url: str | None,
    idempotency_key: str | None,
    priority: str | None = None,
    webhook_events: Sequence[str] = (),
) -> Request:
    """The request that submits ``documents`` as one job or one group."""
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    if webhook_events and not callback_url:
        raise SubmitError("--webhook-event names webhooks sent to --callback-url: give it too")
    events = list(dict.fromkeys(webhook_events))  # a name given twice is asked for once
    if len(documents) > 1:
        if split_pages is not None:
            raise SubmitError("--split-pages splits one PDF; give one file, or several files without it")
        children = [_json_job(d, model or GROUP_DEFAULT_MODEL, options) for d in documents]
        fanout: dict[str, Any] = {"max_parallel": max_parallel or 0, "children": children}
        if callback_url:
            fanout["callback_url"] = callback_url
        if events:
            fanout["webhook_events"] = events
        if priority:
            fanout["priority"] = priority
        return Request(headers, json={"fanout": fanout})
    (document,) = documents
    if max_parallel is not None and split_pages is None:
        raise SubmitError("--max-parallel caps a group: give several files, or --split-pages")
    if options:
        job = _json_job(document, model or GROUP_DEFAULT_MODEL, options)
        if split_pages is not None:
            job.update(split_pages=split_pages, max_parallel=max_parallel or 0)
        if callback_url:
            job["callback_url"] = callback_url
        if events:
            job["webhook_events"] = events
        if priority:
            job["priority"] = priority
        return Request(headers, json=job)
    params: dict[str, Any] = {}
    if model:
        params["model"] = model
    if split_pages is not None:
        params.update(split_pages=split_pages, max_parallel=max_parallel or 0)
    if callback_url:
        params["callback_url"] = callback_url
    if events:
        params["webhook_events"] = ",".join(events)
    if priority:
        params["priority"] = priority
    return Request(headers, body=document.data, content_type=document.content_type, params=params)


def _json_job(document: Document, model: str, options: dict[str, Any]) -> dict[str, Any]:
    job: dict[str, Any] = {
        "model": model,
        "content_type": document.content_type,
        "payload": base64.b64encode(document.data).decode("ascii"),
    }
    if options:
        job["options"] = options
    return job

"""The one catalogue of OCR models.

A model is declared once, here: its engine, where it runs, the content types
it accepts, the options it reads (a marshmallow schema), its Celery queue and
the adapter that runs it.  The gateway checks content types and options
against it at submission, ``GET /models`` shows it, the dispatcher publishes
to its queue and the workers import its adapter from it.  The adapter is
named as ``"module:Class"`` so that the gateway never imports an engine.

Adding a model is one adapter module under ``workers/adapters`` and one
entry in ``MODELS``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

from marshmallow import INCLUDE, Schema
from marshmallow.validate import OneOf, Range, Regexp

from jobs.fields import StrictBoolean, StrictInteger, StrictNumber, Text

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff"})
DOCUMENT_TYPES = IMAGE_TYPES | {"application/pdf"}
#: The highest ``first_page`` a job may name.
MAX_FIRST_PAGE = 1_000_000


class Location(str, Enum):
    """Where a model's engine runs: on hosts of ours, or at a cloud provider."""

    ON_PREM = "on_prem"
    CLOUD = "cloud"


# -- the options each model reads ---------------------------------------------------------


class PageOptions(Schema):
    """Options of every engine that renders a document and reads it page by page."""

    timeout_s = StrictNumber(
        validate=Range(min=0, min_inclusive=False),
        metadata={"description": "Time budget of the whole document, in seconds."},
    )
    text_layer = Text(
        validate=OneOf(["ignore", "prefer"]),
        metadata={
            "description": "'prefer': a PDF page that carries text is answered from that text, without OCR "
            "(the page's source is then 'text_layer'); 'ignore' (the default): every page is OCRed."
        },
    )
    first_page = StrictInteger(
        validate=Range(min=1, max=MAX_FIRST_PAGE),
        metadata={
            "description": "The number of the document's first page, when it is part of a larger one: "
            "its pages are numbered from there (default 1). A split sets it for each part."
        },
    )


class TesseractOptions(PageOptions):
    lang = Text(
        validate=Regexp(r"[A-Za-z0-9_/]+(\+[A-Za-z0-9_/]+)*\Z"),
        metadata={"description": "Tesseract language(s), e.g. 'eng' or 'eng+deu'; default 'eng'."},
    )
    psm = StrictInteger(validate=Range(min=0, max=13), metadata={"description": "Tesseract page segmentation mode."})


class EchoOptions(Schema):
    """The echo model's fault and latency switches; any other key is kept untouched (tests tag jobs with them)."""

    class Meta:
        unknown = INCLUDE

    delay_ms = StrictNumber(
        validate=Range(min=0), metadata={"description": "Sleep this long per page (a form feed separates pages)."}
    )
    fail = StrictBoolean(metadata={"description": "Fail permanently (echo_failed)."})
    fail_until = StrictNumber(
        validate=Range(min=0),
        metadata={"description": "Fail (echo_failed) while the clock is before these Unix seconds."},
    )
    transient_fail = StrictBoolean(metadata={"description": "Fail transiently (echo_transient), retried."})
    crash = StrictBoolean(metadata={"description": "End the worker process (workers with crashes enabled)."})


# -- the catalogue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    name: str
    engine: str
    location: Location
    content_types: frozenset[str]
    options: type[Schema]
    adapter: str  # "module:Class", imported by the workers only

    @property
    def queue(self) -> str:
        """The Celery queue that the workers for this model consume."""
        return f"ocr.{self.name}"

    @property
    def options_schema(self) -> Schema:
        return _schema(self.options)

    def accepts(self, content_type: str) -> bool:
        return content_type in self.content_types


@functools.cache
def _schema(schema_class: type[Schema]) -> Schema:
    # One instance per class: building a schema is the costly part, loading with it is not.
    return schema_class()


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model(
            "tesseract",
            "Tesseract 5",
            Location.ON_PREM,
            DOCUMENT_TYPES,
            TesseractOptions,
            "workers.adapters.tesseract:TesseractAdapter",
        ),
        Model(
            "paddleocr",
            "PP-OCRv4 on ONNX Runtime",
            Location.ON_PREM,
            DOCUMENT_TYPES,
            PageOptions,
            "workers.adapters.paddleocr:PaddleOcrAdapter",
        ),
        Model(
            "echo",
            "echo (returns a text/plain payload)",
            Location.ON_PREM,
            frozenset({"text/plain"}),
            EchoOptions,
            "workers.adapters.echo:EchoAdapter",
        ),
    )
}

#: The model of a raw document whose query names none (``OCRGW_DEFAULT_MODEL`` overrides it).
DEFAULT_MODEL = "tesseract"

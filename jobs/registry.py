"""The one catalogue of OCR models.

A model is declared once, here: its engine, where it runs, the content types
it accepts, the options it reads (a marshmallow schema), its Celery queue and
the adapter that runs it.  The gateway checks content types and options
against it at submission, ``GET /models`` shows it, the dispatcher publishes
to its queue and the workers import its adapter from it.  The adapter is
named as ``"module:Class"`` so that the gateway never imports an engine.

Adding a model is one adapter module under ``workers/adapters`` and one
entry in ``MODELS``.

Remote models are the exception: each one forwards its documents to an
upstream ocrgw, and the operator declares them (``OCRGW_REMOTE_MODELS``,
parsed by ``jobs.config``).  Every process adds them to ``MODELS`` once it
has its settings (``install_remote_models``), before it serves anything, so
a worker consumes their queues as it does the built-in models' (``model_queues``).
They are ``cloud`` models: a document that must stay on premises never
reaches one (``may_take``).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from marshmallow import INCLUDE, Schema
from marshmallow.validate import OneOf, Range, Regexp

from jobs.contract import Priority
from jobs.fields import StrictBoolean, StrictInteger, StrictNumber, Text
from jobs.pdf_outputs import OPTIMIZE_LEVELS, OUTPUT_TYPES

#: OCRmyPDF's default ``--rotate-pages-threshold`` (``documents.geometry`` applies it).
DEFAULT_ROTATE_PAGES_THRESHOLD = 14.0
#: How ``rotate_pages`` finds which way up a page stands (``documents.geometry``): the learned classifier,
#: with Tesseract's OSD where it is unsure ("auto"), or OSD alone ("osd").
ORIENTATION_METHODS = ("auto", "osd")
DEFAULT_ORIENTATION = "auto"
#: Who decided which way up a page stands, as a result's page says it (``orientation_by``).
ORIENTATION_DECIDERS = ("classifier", "osd")
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff"})
DOCUMENT_TYPES = IMAGE_TYPES | {"application/pdf"}
#: The highest ``first_page`` a job may name.
MAX_FIRST_PAGE = 1_000_000
#: The range of ``options.image_dpi``: a fax's coarsest mode to a film scanner's finest.
MIN_IMAGE_DPI_OPTION, MAX_IMAGE_DPI_OPTION = 50, 4800


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
        validate=OneOf(["ignore", "prefer", "redo"]),
        metadata={
            "description": "'prefer': a PDF page that carries text is answered from that text, without OCR "
            "(the page's source is then 'text_layer'); 'ignore' (the default): every page is OCRed, and in the "
            "searchable PDF an earlier invisible OCR layer is replaced; 'redo': an earlier invisible OCR layer "
            "is replaced, the page's visible text is kept (its lines' source is 'text_layer') and OCR reads the rest."
        },
    )
    first_page = StrictInteger(
        validate=Range(min=1, max=MAX_FIRST_PAGE),
        metadata={
            "description": "The number of the document's first page, when it is part of a larger one: "
            "its pages are numbered from there (default 1). A split sets it for each part."
        },
    )
    rotate_pages = StrictBoolean(
        metadata={
            "description": "Turn each OCRed page upright (a quarter or half turn) when its orientation is found "
            "with confidence enough (OCRmyPDF's --rotate-pages; see 'orientation'); default false. The page's "
            "'rotation' says how far it was turned."
        },
    )
    rotate_pages_threshold = StrictNumber(
        validate=Range(min=0, max=1000),
        metadata={
            "description": "The confidence Tesseract's orientation detection needs for a turn (OCRmyPDF's "
            "--rotate-pages-threshold; the classifier's own threshold is fixed); "
            f"default {DEFAULT_ROTATE_PAGES_THRESHOLD}."
        },
    )
    orientation = Text(
        validate=OneOf(ORIENTATION_METHODS),
        metadata={
            "description": "How rotate_pages tells which way up a page stands: 'auto' (the default), a learned "
            "page-orientation classifier, with Tesseract's orientation detection where the classifier is unsure; "
            "'osd', Tesseract's orientation detection on every page. The page's 'orientation_by' says which decided."
        },
    )
    deskew = StrictBoolean(
        metadata={
            "description": "Straighten each OCRed page that was scanned crooked (within 10 degrees) before reading "
            "it (OCRmyPDF's --deskew); default false. The page's 'skew' says by how much."
        },
    )
    output_type = Text(
        validate=OneOf(OUTPUT_TYPES),
        metadata={
            "description": "The searchable PDF's type (GET /jobs/{id}/result.pdf): 'pdf' (the default) or 'pdfa', "
            "PDF/A-2b (OCRmyPDF's --output-type). The query's output_type overrides it."
        },
    )
    optimize = StrictInteger(
        validate=OneOf(OPTIMIZE_LEVELS),
        metadata={
            "description": "How the searchable PDF's images are compressed (OCRmyPDF's --optimize): 0 as they came "
            "(the default), 1 losslessly, 2 also lossily. The query's optimize overrides it."
        },
    )
    layout = StrictBoolean(
        metadata={
            "description": "Find each page's layout (title, section headers, paragraphs, lists, tables with their "
            "cells, figures, captions, page header and footer) and read it in reading order: the page gains "
            "'blocks', its 'text' becomes its body (no page header or footer, no words inside a figure) and its "
            "'lines' come in reading order; the result gains 'tables'. Default false. A page whose layout fails "
            "keeps its plain lines and says why in 'layout_error'. Only a model that gives words with boxes "
            "takes it, else 422 invalid_options."
        },
    )
    image_dpi = StrictNumber(
        validate=Range(min=MIN_IMAGE_DPI_OPTION, max=MAX_IMAGE_DPI_OPTION),
        metadata={
            "description": "The resolution of an image document, in dots per inch, instead of the one it states "
            "(OCRmyPDF's --image-dpi): it sizes the searchable PDF's page. Without it, an image that states none "
            "gets one estimated from its text. Ignored for PDFs. The page's 'dpi' and 'dpi_source' say what was used."
        },
    )


#: The Tesseract language of a job whose options name none.
DEFAULT_LANGUAGE = "eng"
#: What ``tesseract --list-langs`` lists beside the languages: orientation and script detection, not a language.
NOT_A_LANGUAGE = "osd"


class TesseractOptions(PageOptions):
    lang = Text(
        validate=Regexp(r"[A-Za-z0-9_/]+(\+[A-Za-z0-9_/]+)*\Z"),
        metadata={
            "description": f"Tesseract language(s), e.g. 'eng' or 'eng+deu'; default '{DEFAULT_LANGUAGE}'. "
            "Each must be one the live workers have (GET /models lists them), else 422 unsupported_language."
        },
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


class RemoteOptions(Schema):
    """A remote model's options go to the upstream as they are: the upstream's model checks them."""

    class Meta:
        unknown = INCLUDE

    timeout_s = StrictNumber(
        validate=Range(min=0, min_inclusive=False),
        metadata={
            "description": "Time budget of the whole document, in seconds: sent to the upstream, and how "
            "long the upstream's job is waited for (at most OCRGW_JOB_TIMEOUT)."
        },
    )


# -- the catalogue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RemoteModel:
    """A model served by an upstream ocrgw: ``name`` here is its ``model`` there, at ``url``."""

    name: str
    upstream_model: str
    url: str  # the upstream's base URL, http(s), without credentials
    key: str = field(default="", repr=False)  # its bearer key ('' for none); kept out of logs


@dataclass(frozen=True)
class Model:
    name: str
    engine: str
    location: Location
    content_types: frozenset[str]
    options: type[Schema]
    adapter: str  # "module:Class", imported by the workers only
    remote: RemoteModel | None = None  # where a remote model sends its documents; its adapter is built with it
    # Reads Tesseract languages (options.lang): a job may name only those the live workers have.
    reads_languages: bool = False
    # Its pages come with words and their boxes: what a page's layout (options.layout) is found from.
    gives_words: bool = True

    @property
    def queue(self) -> str:
        """The Celery queue that the workers for this model consume: its batch lane."""
        return QUEUE_PREFIX + self.name

    @property
    def interactive_queue(self) -> str:
        """The model's interactive lane, which its workers consume before ``queue``."""
        return interactive_queue_of(self.queue)

    def queue_for(self, priority: str) -> str:
        """The queue of a job of this model and ``priority`` (a ``Priority`` value; anything else is batch)."""
        return self.interactive_queue if priority == Priority.INTERACTIVE.value else self.queue

    @property
    def options_schema(self) -> Schema:
        return _schema(self.options)

    def accepts(self, content_type: str) -> bool:
        return content_type in self.content_types

    def languages_of(self, options: Mapping[str, object]) -> frozenset[str]:
        """The Tesseract languages a job of this model with ``options`` needs ('eng+deu' is two); none
        for a model that reads none."""
        if not self.reads_languages:
            return frozenset()
        return frozenset(str(options.get("lang", DEFAULT_LANGUAGE)).split("+"))

    def may_take(self, *, on_prem: bool) -> bool:
        """False for a document that must stay on premises (``on_prem``) and a model that would send it away."""
        return not (on_prem and self.location is Location.CLOUD)


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
            reads_languages=True,
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
            gives_words=False,
        ),
    )
}

#: The model of a raw document whose query names none (``OCRGW_DEFAULT_MODEL`` overrides it).
DEFAULT_MODEL = "tesseract"
#: The models that ship with ocrgw; a remote model may not take one of their names.
BUILT_IN_MODELS = frozenset(MODELS)
#: Every model's name, sorted; the same list object all along (schemas show it as their enum), kept
#: up to date by ``install_remote_models``.
MODEL_NAMES: list[str] = sorted(MODELS)

REMOTE_ADAPTER = "workers.adapters.remote:RemoteAdapter"
#: What a remote model accepts: what any model of ocrgw accepts; the upstream's model has the last word.
REMOTE_CONTENT_TYPES = frozenset().union(*(m.content_types for m in MODELS.values()))


def remote_entry(remote: RemoteModel) -> Model:
    """The registry's entry of a remote model.  It gives words when its upstream model does: a built-in
    model's name says whether; any other name is the upstream's to judge."""
    upstream = MODELS.get(remote.upstream_model) if remote.upstream_model in BUILT_IN_MODELS else None
    return Model(
        remote.name,
        f"remote: model {remote.upstream_model} of an upstream ocrgw",
        Location.CLOUD,
        REMOTE_CONTENT_TYPES,
        RemoteOptions,
        REMOTE_ADAPTER,
        remote,
        gives_words=upstream.gives_words if upstream is not None else True,
    )


def install_remote_models(remotes: Iterable[RemoteModel]) -> None:
    """Adds the remote models to ``MODELS`` (again: replaced); a built-in model's name is refused."""
    for remote in remotes:
        if remote.name in BUILT_IN_MODELS:
            raise ValueError(f"a remote model cannot take the name of the built-in model {remote.name!r}")
        if remote.name not in MODELS:
            bisect.insort(MODEL_NAMES, remote.name)
        MODELS[remote.name] = remote_entry(remote)


#: What a model's interactive queue adds to its queue's name.  A model's name has no dot, so no
#: model's queue can be another's interactive one.
INTERACTIVE_SUFFIX = ".interactive"
#: What every model's queue starts with (``Model.queue``).
QUEUE_PREFIX = "ocr."


def interactive_queue_of(queue: str) -> str:
    """The interactive lane beside a model's ``queue`` (``ocr.echo`` -> ``ocr.echo.interactive``)."""
    return queue + INTERACTIVE_SUFFIX


def is_interactive_queue(queue: str) -> bool:
    """Whether ``queue`` is a model's interactive lane, ``ocr.<model>.interactive``: the suffix alone is
    not enough, since a model may be named ``interactive`` and its batch queue is ``ocr.interactive``."""
    if not (queue.startswith(QUEUE_PREFIX) and queue.endswith(INTERACTIVE_SUFFIX)):
        return False
    model = queue[len(QUEUE_PREFIX) : -len(INTERACTIVE_SUFFIX)]
    return bool(model) and "." not in model


def model_queues() -> list[str]:
    """Every model's queues, remote models included once installed: what a worker consumes unless told
    otherwise.  The interactive lanes come first, each model's before its batch queue."""
    return [MODELS[name].interactive_queue for name in MODEL_NAMES] + [MODELS[name].queue for name in MODEL_NAMES]


def with_interactive_lanes(queues: Iterable[str]) -> list[str]:
    """``queues`` (a worker's ``--queues``), each model's queue joined by its interactive lane, the
    interactive lanes first; any other queue (coordinator, webhooks) stays as it is."""
    names = list(dict.fromkeys(queues))
    batch_queues = {MODELS[name].queue for name in MODEL_NAMES}
    lanes = [interactive_queue_of(q) for q in names if q in batch_queues]
    return list(dict.fromkeys([*lanes, *names]))

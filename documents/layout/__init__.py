"""A page's layout: its regions found by a learned model, its lines put in them, in reading order.

``analyse`` is the one door: the worker calls it once per page, after the
page was read (OCR) or its text layer taken (a born-digital page), with the
page's image as the layout model should see it.  It answers the page's
blocks (``documents.structure``) and the order of its lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from PIL import Image

from documents.structure import Block, Box


class WordLike(Protocol):
    text: str
    bbox: Box


class LineLike(Protocol):
    text: str
    bbox: Box
    words: Sequence[WordLike]


@dataclass(frozen=True)
class Piece:
    """A line of the page as laid out: the page's line ``line`` (an index into the lines given), whole
    (``words`` None) or only the words ``words`` of it (indices into its words): a line the layout's regions
    cut in two (a table's row read as one line with the text beside it) is two pieces."""

    line: int
    words: tuple[int, ...] | None = None


@dataclass(frozen=True)
class PageLayout:
    pieces: list[Piece]  # the page's lines in reading order; each block's ``lines`` index into this list
    blocks: list[Block]  # in reading order: ``blocks[i].order == i``


def analyse(
    image: Image.Image,
    lines: Sequence[LineLike],
    *,
    width: int,
    height: int,
    dpi: float,
    font_sizes: Sequence[float | None] | None = None,
    bold: Sequence[bool | None] | None = None,
    known_words: frozenset[str] = frozenset(),
) -> PageLayout:
    """The layout of a page of ``width`` x ``height`` pixels (the space of the lines' boxes, read at ``dpi``)
    whose lines are ``lines`` (in the engine's order).

    ``image`` is the page as drawn; it may be smaller than ``width`` x ``height`` (a born-digital page is
    drawn small for the model alone): regions are scaled to the lines' space.  ``font_sizes`` and ``bold``,
    one per line when the page's text came from the PDF, are its font's size in points and weight.
    ``known_words`` are words (lower case) the rest of the document holds: a word hyphenated at a line's end
    is joined back when it, or the dictionary, knows the whole word.  A page without lines has no blocks.
    Raises on a model failure; the caller keeps the page's plain lines and records the error.
    """
    raise NotImplementedError

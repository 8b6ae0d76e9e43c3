"""A heading's level, from the size of its type against the page's body text.

The size compared is the font size in points on a born-digital page (the
PDF says it), and on a scan the size of the type estimated from the height
of the line's words: a word's box runs from its tallest letter's top to its
lowest letter's foot, so its height is divided by the share of the type's
size those letters cover (``_SPANS``: a word with a descender such as
``g`` or ``y`` covers the whole height from ascender to descender, one of
capitals and ascenders about four fifths of it, one of small letters only
about half; measured on Tesseract's boxes of Helvetica and DejaVu at 200 dpi).  The page
itself is the only measure: children of a split are read apart and cannot
compare pages, so a level depends on nothing but its own page.

With ``size`` the heading's and ``body`` the page's body text's (the median
over the lines of its text blocks):

- ``size >= TITLE_RATIO * body``: the page's ``title``, level 1;
- ``size >= SECTION_RATIO * body``: a ``section_header`` of level 2;
- smaller (a heading set in the body's size, bold or alone on its line): level 3.

A 22-point title, a 15-point section and a 12-point subsection over 10-point
text come out as levels 1, 2 and 3; a 14-point heading over 11-point text
(1.27) is a level 3.  Sizes closer than that cannot be told from a scan's
boxes, which vary by a few per cent from line to line.

A region the model calls a heading that holds more than ``MAX_HEADING_LINES``
lines of body-sized type is a paragraph it mistook, and is text; so is one of
``SENTENCE_WORDS`` words or more that ends like a sentence (``.``, ``:``) and
is not set larger than the body (``The files created are:``).  A short text
block (at most two lines, not ending a sentence) whose type is at least
``MISSED_RATIO`` times the body's is a heading the model missed; on a
born-digital page a one-line bold block that does not end a sentence is one
too, of level 3.  So is the first line of a text block (``leads``) when it
does not end a sentence and is set ``MISSED_RATIO`` times larger than the
block's other lines, or bold above lines that are not: the model framed a
heading with its text (the title of a sidebar's box).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from documents import structure
from documents.structure import Box

TITLE_RATIO = 1.6
SECTION_RATIO = 1.3
#: A short text block whose type is this much larger than the body's is a heading the model did not see.
MISSED_RATIO = 1.15
MAX_HEADING_LINES = 3
#: A heading the model found that ends like a sentence, of this many words or more, is a sentence.
SENTENCE_WORDS = 4
#: The share of the type's size a word's box covers, by the letters it holds.
_DESCENDERS = frozenset("gjpqy,;()[]{}|/")
_TALL = frozenset("bdfhiklt0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!?&%$#@'\"")
_SPANS = {"descender": 1.0, "tall": 0.79, "small": 0.56}


def word_size(text: str, box: Box) -> float | None:
    """The size of a word's type estimated from its box's height (None for a word too short to tell)."""
    letters = [c for c in text if not c.isspace()]
    if len(letters) < 2:
        return None
    if any(c in _DESCENDERS for c in letters):
        span = _SPANS["descender"]
    elif any(c in _TALL for c in letters):
        span = _SPANS["tall"]
    else:
        span = _SPANS["small"]
    return (box[3] - box[1]) / span


def line_size(words: Sequence[tuple[str, Box]]) -> float | None:
    """The size of a line's type: the median of its words' sizes."""
    sizes = [s for text, box in words if (s := word_size(text, box)) is not None]
    return statistics.median(sizes) if sizes else None


def level(size: float | None, body: float | None) -> tuple[str, int]:
    """The type and level of a heading of type ``size`` on a page whose body is ``body``."""
    if size is None or not body:
        return structure.SECTION_HEADER, 2
    if size >= TITLE_RATIO * body:
        return structure.TITLE, structure.TITLE_LEVEL
    if size >= SECTION_RATIO * body:
        return structure.SECTION_HEADER, 2
    return structure.SECTION_HEADER, structure.MAX_LEVEL


def is_missed_heading(text: str, size: float | None, body: float | None, lines: int, bold: bool) -> bool:
    """Whether a text block is a heading the model did not see (see the module's docstring)."""
    if lines > 2 or not text or text.rstrip()[-1:] in ".:;,":
        return False
    if size is not None and body and size >= MISSED_RATIO * body:
        return True
    return bold and lines == 1


def is_mistaken_heading(size: float | None, body: float | None, lines: int, text: str = "") -> bool:
    """Whether a region the model calls a heading is a paragraph, or a sentence that introduces one."""
    body_sized = size is None or not body or size < SECTION_RATIO * body
    if lines > MAX_HEADING_LINES and body_sized:
        return True
    sentence = len(text.split()) >= SENTENCE_WORDS and text.rstrip()[-1:] in ".:;,"
    return sentence and (size is None or not body or size < MISSED_RATIO * body)


def leads(
    text: str,
    size: float | None,
    rest: Sequence[float | None],
    bold: bool | None,
    rest_bold: Sequence[bool | None] | None,
) -> bool:
    """Whether the first line of a text block (``text``, of type ``size``, ``bold``) is a heading over the
    block's other lines (their sizes ``rest``, their boldness ``rest_bold``)."""
    if not rest or not text.strip() or text.rstrip()[-1:] in ".:;,":
        return False
    sizes = [s for s in rest if s]
    if size and sizes and size >= MISSED_RATIO * statistics.median(sizes):
        return True
    return bool(bold) and rest_bold is not None and not any(rest_bold)

"""What the hOCR and ALTO documents of a result share: its words, their boxes, XML-safe text.

Both are drawn from a result's page dicts (``{"page", "width", "height",
"lines": [{"text", "confidence", "bbox", "words": [...]}]}``).  A line's
words are its ``words``; a line without them (a result made before engines
gave words, echo's lines) stands as one word, with the line's text, box and
confidence, so every line shows in either document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

Box = tuple[int, int, int, int]

#: The software named in both documents.
SOFTWARE = "ocrgw"

# What XML 1.0 cannot carry (most C0 controls, lone surrogates, U+FFFE/U+FFFF): an OCR'd or echoed
# text may hold them, and one would make the whole document unreadable to an XML parser.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def words_of(line: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The line's words; a line without any is one word: its text, box and confidence."""
    return list(line.get("words") or [line])


def box_of(item: Mapping[str, Any]) -> Box:
    x0, y0, x1, y1 = (int(v) for v in item["bbox"])
    return x0, y0, x1, y1


def union_box(boxes: Iterable[Box]) -> Box:
    """The smallest box around ``boxes`` (at least one)."""
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return min(x0s), min(y0s), max(x1s), max(y1s)


def page_size(page: Mapping[str, Any]) -> tuple[int, int] | None:
    """The page image's width and height in pixels; None for a page without an image (echo's)."""
    width, height = page.get("width"), page.get("height")
    return (int(width), int(height)) if width and height else None


def confidence_of(item: Mapping[str, Any]) -> float:
    """The confidence, 0..1 (a value out of range is held to it)."""
    return min(1.0, max(0.0, float(item.get("confidence", 0.0))))


def xml_text(text: str) -> str:
    """``text`` as XML character data."""
    return escape(_NOT_XML.sub("\ufffd", text))


def xml_attr(value: object) -> str:
    """``value`` as a quoted XML attribute value (newlines and tabs kept as character references)."""
    return quoteattr(_NOT_XML.sub("\ufffd", str(value)))


def attributes(pairs: Sequence[tuple[str, object]]) -> str:
    """``name="value"`` pairs, each after a space, in the order given."""
    return "".join(f" {name}={xml_attr(value)}" for name, value in pairs)

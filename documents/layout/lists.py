"""List items: a text block whose lines start with bullets or numbers, cut into one block per item.

An item starts at a line whose first word is a bullet (``BULLETS``), a word
glued to a bullet (``•globs2``), or an enumerator (``1.``, ``2)``, ``a)``,
``(iv)``); the lines after it, up to the next item's start, continue it.  A
bulleted item whose text hangs right of its bullet ends at a line that starts
back at the bullet without one: the paragraph after a list.  An
enumerator starts items only when at least two lines of the block start with
one (a sentence may begin with ``1.`` by chance, a list does not have one
item); a bullet starts one on its own.

Tesseract reads a small round bullet as a letter or a sign: ``e``, ``«``,
``°``, ``o``, ``©``, ``=``...  Such a glyph is taken for a bullet only when it stands
alone at a hanging indent: a one-character first word with the rest of its
line starting where another line of the block starts (within half a
letter's height), and well right of the glyph; or the same glyph opening two
or more lines.

A bullet is left out of the item's text (Markdown and HTML draw their own);
a number is kept, since it is part of what the item says (``2)`` may be cited).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from documents.structure import Box

BULLETS = frozenset("•·◦▪▫‣⁃∙○●■□►▸-*–—")
#: What Tesseract reads a small round or square bullet as, when it reads it at all.
MISREAD_BULLETS = frozenset("e«°o©¢»+®@=")
#: How near, in letter heights, a continuation line's start must be to the text after a bullet.
HANGING = 0.5
_ENUMERATOR = re.compile(r"^(\d{1,3}[.)]|[a-zA-Z][.)]|\((\d{1,3}|[a-z]|[ivxlc]{1,6})\))$")


@dataclass(frozen=True)
class ListLine:
    words: Sequence[tuple[str, Box]]  # the line's words in reading order, with their boxes

    @property
    def x0(self) -> int:
        return self.words[0][1][0]


@dataclass(frozen=True)
class Item:
    lines: tuple[int, ...]  # indices into the block's lines
    texts: tuple[str, ...]  # those lines' texts, the bullet left out
    is_item: bool  # False for the lines before the first item (an introduction) or after a list's end


def items(lines: Sequence[ListLine], letter_height: float) -> list[Item] | None:
    """The block's lines cut into items, or None when it is not a list."""
    if not lines or any(not line.words for line in lines):
        return None
    marks = [_mark(i, lines, letter_height) for i in range(len(lines))]
    numbered = sum(1 for m in marks if m == "number")
    starts = [m == "bullet" or (m == "number" and numbered >= 2) for m in marks]
    if not any(starts):
        return None
    found: list[Item] = []
    current: list[int] = []
    texts: list[str] = []
    is_item = False
    hanging: int | None = None  # where a bulleted item's text starts, when it hangs right of its bullet
    for i, line in enumerate(lines):
        back_at_bullet = hanging is not None and not starts[i] and line.x0 < hanging - HANGING * letter_height
        if (starts[i] and (current or i == 0)) or back_at_bullet:
            if current:
                found.append(Item(tuple(current), tuple(texts), is_item))
            current, texts, is_item = [], [], starts[i]
            hanging = None
            if starts[i] and marks[i] == "bullet" and len(line.words) > 1:
                text_start = line.words[1][1][0]
                hanging = text_start if text_start - line.x0 > HANGING * letter_height else None
        words = [w for w, _ in line.words]
        if starts[i] and marks[i] == "bullet":
            words = _without_bullet(words)
        current.append(i)
        texts.append(" ".join(words))
    found.append(Item(tuple(current), tuple(texts), is_item))
    return found


def _mark(i: int, lines: Sequence[ListLine], letter_height: float) -> str | None:
    """'bullet' or 'number' when line ``i`` opens an item with one."""
    first = lines[i].words[0][0]
    if first in BULLETS and (len(lines[i].words) > 1 or first != "-"):
        return "bullet"
    if len(first) > 1 and first[0] in BULLETS - {"-", "*", "–", "—"}:
        return "bullet"  # glued: "•globs2"
    if _ENUMERATOR.match(first) and len(lines[i].words) > 1:
        return "number"
    if first in MISREAD_BULLETS and len(lines[i].words) > 1:
        same_glyph = sum(1 for line in lines if line.words[0][0] == first and len(line.words) > 1)
        glyph_start, text_start = lines[i].x0, lines[i].words[1][1][0]
        near = HANGING * letter_height
        hanging = text_start - glyph_start > near and any(
            abs(line.x0 - text_start) <= near for j, line in enumerate(lines) if j != i
        )
        if same_glyph >= 2 or hanging:
            return "bullet"
    return None


def _without_bullet(words: list[str]) -> list[str]:
    if words[0] in BULLETS or words[0] in MISREAD_BULLETS:
        return words[1:]
    return [words[0][1:], *words[1:]]

"""How close a page's structure is to its truth: OmniDocBench's measures, on Markdown and on a result's JSON.

Reading order is the normalised edit distance between two texts: the
Levenshtein distance over the longer one's length, 0 when they are the same
and 1 when nothing is shared.  Both texts are first made comparable
(``plain``): Markdown's marks (heading hashes, list bullets, emphasis, a
table's pipes and rule row, HTML tags and comments, images) are taken out
and every run of whitespace becomes one space, so that what is measured is
the words and their order, not how they were marked up or wrapped.

A heading counts (``heading_f1``) when a true heading of the same level has
text within 0.2 of its own (normalised edit distance, each true heading
matched once): an OCR slip in a long heading does not lose it, a heading at
the wrong level does.  A table's cell accuracy (``cell_accuracy``) is the
share of its true cells whose text is found, within the same 0.2, in the
cell that covers that row and column of the table that best matches it;
a table read with an extra row or column loses the cells it moved.

What should not be in the body at all is counted, not scored: the running
header and footer strings found in a page's Markdown, and the words drawn
inside its figures found there more often than the true body holds them
(``leaks``).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.scans import levenshtein

#: A heading's or a cell's text is taken as read when within this normalised edit distance of the truth.
TEXT_TOLERANCE = 0.2

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$", re.M)
_HEADING_MARK = re.compile(r"^\s{0,3}#{1,6}\s+", re.M)
_LIST_MARK = re.compile(r"^\s*(?:[-*+\u2022\u25aa\u25a0]|\d+[.)])\s+", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")
_WORD = re.compile(r"[a-z0-9]+(?:[-.,/][a-z0-9]+)*")


def plain(markdown: str) -> str:
    """The words of ``markdown`` in their order, without marks, one space apart."""
    text = _COMMENT.sub(" ", markdown)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _TABLE_RULE.sub(" ", text)
    text = _TAG.sub(" ", text)
    text = _HEADING_MARK.sub("", text)
    text = _LIST_MARK.sub("", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = html.unescape(text).replace("|", " ")
    return re.sub(r"\s+", " ", text).strip()


def edit_distance(a: str, b: str) -> float:
    """Normalised edit distance: Levenshtein over the longer length; 0 for two empty texts."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def reading_order(truth: str, markdown: str) -> float:
    """The normalised edit distance between a page's true body text and a reading of it, both made ``plain``."""
    return edit_distance(plain(truth), plain(markdown))


# -- headings ------------------------------------------------------------------------------

_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def markdown_headings(markdown: str) -> list[tuple[int, str]]:
    """The ATX headings of ``markdown``: (level, text), in order."""
    return [(len(m.group(1)), plain(m.group(2))) for m in _ATX.finditer(_COMMENT.sub("", markdown))]


def _same_text(truth: str, found: str) -> bool:
    return edit_distance(plain(truth).lower(), plain(found).lower()) <= TEXT_TOLERANCE


@dataclass(frozen=True)
class Counts:
    true_positive: int
    found: int
    wanted: int

    @property
    def precision(self) -> float:
        return self.true_positive / self.found if self.found else (1.0 if not self.wanted else 0.0)

    @property
    def recall(self) -> float:
        return self.true_positive / self.wanted if self.wanted else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.true_positive + other.true_positive, self.found + other.found, self.wanted + other.wanted)


def heading_counts(truth: Sequence[tuple[int, str]], found: Sequence[tuple[int, str]]) -> Counts:
    """Each found heading matched to one unmatched true heading of the same level and text (within tolerance)."""
    left = list(truth)
    hits = 0
    for level, text in found:
        for i, (true_level, true_text) in enumerate(left):
            if level == true_level and _same_text(true_text, text):
                del left[i]
                hits += 1
                break
    return Counts(hits, len(found), len(truth))


# -- tables --------------------------------------------------------------------------------

Grid = dict[tuple[int, int], str]


def grid_of(cells: Iterable[Mapping[str, Any]]) -> Grid:
    """A table's cells (``documents.structure`` shape) spread over every row and column they cover."""
    grid: Grid = {}
    for cell in cells:
        for r in range(cell["row"], cell["row"] + cell.get("row_span", 1)):
            for c in range(cell["col"], cell["col"] + cell.get("col_span", 1)):
                grid[(r, c)] = cell["text"]
    return grid


def truth_grid(rows: Sequence[Sequence[str]]) -> Grid:
    return {(r, c): text for r, row in enumerate(rows) for c, text in enumerate(row)}


def cell_accuracy(truth: Grid, found: Grid) -> float:
    """The share of true cells whose text is in the found table's cell at the same row and column."""
    if not truth:
        return 1.0
    right = sum(1 for place, text in truth.items() if place in found and _same_text(text, found[place]))
    return right / len(truth)


def best_table(truth: Grid, candidates: Sequence[Grid]) -> tuple[float, int | None]:
    """The cell accuracy of the candidate that matches ``truth`` best, and its index (None: no candidate)."""
    best, index = 0.0, None
    for i, grid in enumerate(candidates):
        score = cell_accuracy(truth, grid)
        if index is None or score > best:
            best, index = score, i
    return best, index


_PIPE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")


def markdown_tables(markdown: str) -> list[Grid]:
    """The GitHub tables of ``markdown`` (pipe rows around a rule row), as grids; the rule row is not a row."""
    tables: list[Grid] = []
    rows: list[list[str]] = []

    def close() -> None:
        if rows:
            tables.append(truth_grid(rows))
            rows.clear()

    for line in markdown.splitlines():
        match = _PIPE_ROW.match(line)
        if not match:
            close()
            continue
        if _TABLE_RULE.fullmatch(line):
            continue
        rows.append([plain(cell) for cell in match.group(1).split("|")])
    close()
    return tables


# -- what should not be in the body ---------------------------------------------------------


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(plain(text).lower()))


@dataclass(frozen=True)
class Leaks:
    running: int  # running header and footer strings found in the body
    figure_words: int  # words drawn inside a figure found in the body beyond the truth's own

    @property
    def total(self) -> int:
        return self.running + self.figure_words


def leaks(body_markdown: str, truth_body: str, running: Sequence[str], figure_words: Sequence[str]) -> Leaks:
    """What of the running header and footer, and of the figures' words, a page's body holds."""
    body = plain(body_markdown).lower()
    found_running = sum(body.count(plain(s).lower()) for s in running if s)
    have, want = words(body_markdown), words(truth_body)
    drawn = set()
    for word in figure_words:
        drawn.update(_WORD.findall(word.lower()))
    found_words = sum(max(0, have[w] - want[w]) for w in drawn)
    return Leaks(found_running, found_words)

"""Invisible text over a PDF page: the recognized words where they are seen, in a font that draws nothing.

The text is in render mode 3 (invisible: PDF 1.7, 9.3.6), one text object
per line, each word placed at its own box as OCRmyPDF's hocrtransform does:
the font size is the line's height, the baseline a descent above the line's
bottom, and the horizontal scaling stretches the word to its box's width.
Between two words of a line a space is drawn over the gap, so that a reader
extracts the words with a space between them wherever they stand.

The font is Tesseract's "glyphless" font, as a Type 0 font (PDF 1.7, 9.7):
a CIDFontType2 with two-byte codes (Identity-H) whose CIDToGIDMap sends
every code to one blank glyph half an em wide, and a ToUnicode map that
gives each code its character back.  A code is the number of a character in
the PDF's own table (1, 2, ...), so any Unicode character has one, those
beyond the BMP included (their ToUnicode entry is a UTF-16 surrogate pair),
and the CIDToGIDMap is two bytes per character the PDF uses.
"""

from __future__ import annotations

import io
import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import pikepdf
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

_UNITS_PER_EM = 1000
_ASCENT, _DESCENT = 800, -200  # the glyph's box spans the em: a line's box is one em high
_GLYPH_WIDTH = 500
_FONT_NAME = "GlyphLessFont"
_MAX_CODE = 0xFFFF  # two-byte codes; code 0 is .notdef
_SPACE = " "
_MIN_SCALING = 0.0001  # a horizontal scaling of 0 would draw nothing, not even for a reader


@dataclass(frozen=True)
class Word:
    text: str
    left: float  # points, in the displayed page (origin bottom left, y up)
    right: float


@dataclass(frozen=True)
class Line:
    words: Sequence[Word]
    bottom: float  # points, in the displayed page (origin bottom left, y up)
    top: float


class GlyphlessFont:
    """The font, added to ``pdf`` once, with a code for each of ``characters`` (and the space)."""

    def __init__(self, pdf: pikepdf.Pdf, characters: Iterable[str]):
        ordered = sorted({_SPACE, *characters} - {"\ufffd"})
        ordered = ["\ufffd", *ordered][:_MAX_CODE]  # the replacement character always has a code
        self._codes = {character: code for code, character in enumerate(ordered, start=1)}
        self.font = _type0_font(pdf, ordered)

    def encode(self, text: str) -> bytes:
        """The text's codes, two bytes each (a character without one is drawn as U+FFFD)."""
        fallback = self._codes["\ufffd"]
        return b"".join(self._codes.get(c, fallback).to_bytes(2, "big") for c in text)


def drawable(text: object) -> str:
    """The text with whitespace made single spaces, and control characters and lone surrogates made U+FFFD."""
    if not isinstance(text, str):
        return ""
    text = " ".join(text.split())
    return "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)


def text_content(lines: Iterable[Line], font: GlyphlessFont, font_name: str) -> bytes:
    """Content operators drawing ``lines`` invisibly, in the displayed page's points.

    Each word is stretched to its box and followed by a space, then moved by
    the rest of the gap (a TJ displacement), so that the next word starts at
    its box's left edge with no placing of its own: a line costs one text
    matrix, a word one scaling, its codes and one number.
    """
    out: list[bytes] = [b"3 Tr"]  # the rendering mode outlives BT/ET: once for the page
    space = _escaped(font.encode(_SPACE))
    for line in lines:
        size = line.top - line.bottom
        words = [w for w in line.words if w.text and w.right > w.left]
        if size <= 0 or not words:
            continue
        baseline = line.bottom - size * _DESCENT / _UNITS_PER_EM
        out.append(
            f"BT {font_name} {_number(size)} Tf 1 0 0 1 {_number(words[0].left)} {_number(baseline)} Tm".encode()
        )
        em = size * _GLYPH_WIDTH / _UNITS_PER_EM
        for word, following in zip(words, [*words[1:], None], strict=True):
            scaling = max((word.right - word.left) / (len(word.text) * em), _MIN_SCALING)
            codes = _escaped(font.encode(word.text))
            if following is None:
                out.append(f"{_number(100 * scaling, 1)} Tz (".encode() + codes + b") Tj")
                continue
            # After the space the text position is a space's width past the box; the displacement
            # (thousandths of the font size, scaled) takes it to the next word's left edge.
            rest = following.left - word.right - em * scaling
            displacement = round(-rest * 1000 / (size * scaling))
            out.append(f"{_number(100 * scaling, 1)} Tz [(".encode() + codes + space + f") {displacement}] TJ".encode())
        out.append(b"ET")
    return b"\n".join(out) if len(out) > 1 else b""


def _escaped(codes: bytes) -> bytes:
    """The codes as the inside of a literal string: the bytes themselves, but for the four a string escapes."""
    return codes.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)").replace(b"\r", b"\\r")


def _number(value: float, decimals: int = 2) -> str:
    """The number in few characters: positions to a hundredth of a point, scalings to a tenth of a percent."""
    if not math.isfinite(value):
        return "0"
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _type0_font(pdf: pikepdf.Pdf, characters: Sequence[str]) -> pikepdf.Object:
    program = glyphless_font()
    descriptor = pikepdf.Dictionary(
        Type=pikepdf.Name.FontDescriptor,
        FontName=pikepdf.Name("/" + _FONT_NAME),
        Flags=5,  # fixed pitch, symbolic
        FontBBox=[0, _DESCENT, _GLYPH_WIDTH, _ASCENT],
        ItalicAngle=0,
        Ascent=_ASCENT,
        Descent=_DESCENT,
        CapHeight=_ASCENT,
        StemV=80,
        FontFile2=pikepdf.Stream(pdf, program, Length1=len(program)),
    )
    # Code 0 is .notdef (glyph 0); every other code is the blank glyph (glyph 1).
    cid_to_gid = b"\x00\x00" + b"\x00\x01" * len(characters)
    descendant = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.CIDFontType2,
        BaseFont=pikepdf.Name("/" + _FONT_NAME),
        CIDSystemInfo=pikepdf.Dictionary(
            Registry=pikepdf.String("Adobe"), Ordering=pikepdf.String("Identity"), Supplement=0
        ),
        FontDescriptor=pdf.make_indirect(descriptor),
        DW=_GLYPH_WIDTH,
        CIDToGIDMap=pikepdf.Stream(pdf, cid_to_gid),
    )
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type0,
        BaseFont=pikepdf.Name("/" + _FONT_NAME),
        Encoding=pikepdf.Name("/Identity-H"),
        DescendantFonts=[pdf.make_indirect(descendant)],
        ToUnicode=pikepdf.Stream(pdf, _to_unicode(characters)),
    )
    return pdf.make_indirect(font)


def _to_unicode(characters: Sequence[str]) -> bytes:
    """A ToUnicode CMap giving code ``n`` the ``n``-th character, as UTF-16BE (surrogate pairs beyond the BMP)."""
    entries = [f"<{code:04X}> <{c.encode('utf-16-be').hex().upper()}>" for code, c in enumerate(characters, start=1)]
    blocks = []
    for start in range(0, len(entries), 100):  # at most 100 entries a block (PDF 1.7, 9.10.3)
        chunk = entries[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfchar\n" + "\n".join(chunk) + "\nendbfchar")
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode("ascii")


@cache
def glyphless_font() -> bytes:
    """A TrueType font of one blank glyph half an em wide (and .notdef); the PDF maps every code to it.

    The glyph's outline is a box over the em, so that a reader's text
    extraction reports where each character is; render mode 3 never draws it.
    """
    builder = FontBuilder(_UNITS_PER_EM, isTTF=True)
    builder.setupGlyphOrder([".notdef", "blank"])
    builder.setupCharacterMap({0x20: "blank"})
    pen = TTGlyphPen(None)
    pen.moveTo((0, _DESCENT))
    pen.lineTo((0, _ASCENT))
    pen.lineTo((_GLYPH_WIDTH, _ASCENT))
    pen.lineTo((_GLYPH_WIDTH, _DESCENT))
    pen.closePath()
    builder.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "blank": pen.glyph()})
    builder.setupHorizontalMetrics({".notdef": (_GLYPH_WIDTH, 0), "blank": (_GLYPH_WIDTH, 0)})
    builder.setupHorizontalHeader(ascent=_ASCENT, descent=_DESCENT)
    builder.setupNameTable({"familyName": _FONT_NAME, "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=_ASCENT, sTypoDescender=_DESCENT, usWinAscent=_ASCENT, usWinDescent=-_DESCENT)
    builder.setupPost()
    buffer = io.BytesIO()
    builder.save(buffer)
    return buffer.getvalue()

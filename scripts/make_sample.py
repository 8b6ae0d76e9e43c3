#!/usr/bin/env python3
"""Write a sample document for OCR: a PNG page, or a PDF with one page per text.

    make_sample.py page.png "Hello from ocrgw"
    make_sample.py doc.pdf "first page" "second page"

Text is drawn with Pillow's bundled font (``ImageFont.load_default(size=48)``)
so the same pixels come out on any machine, with no system fonts installed.
That makes it usable both for a person trying the gateway and for tests that
need a page whose text Tesseract reads back reliably: black on white, large
glyphs, generous margins.

Newlines in a text start a new line; long lines are wrapped at word breaks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_SIZE = 48
MARGIN = 64
LINE_GAP = 24
MAX_TEXT_WIDTH = 1600
MIN_PAGE_WIDTH = 480
PDF_RESOLUTION = 72.0  # one PDF point per pixel: rendering at scale 1 gives the page back


def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=FONT_SIZE)


def _wrap(text: str, font, draw: ImageDraw.ImageDraw) -> list[str]:
    """Split text into lines no wider than MAX_TEXT_WIDTH, breaking at spaces."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and draw.textlength(candidate, font=font) > MAX_TEXT_WIDTH:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return lines


def render_page(text: str) -> Image.Image:
    """Return a white RGB page with ``text`` in black, sized to fit plus margins."""
    font = _font()
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    lines = _wrap(text, font, probe)
    ascent, descent = font.getmetrics()
    line_height = ascent + descent
    width = max([int(probe.textlength(line, font=font)) for line in lines] + [0])
    page_w = max(MIN_PAGE_WIDTH, width + 2 * MARGIN)
    page_h = 2 * MARGIN + len(lines) * line_height + (len(lines) - 1) * LINE_GAP
    page = Image.new("RGB", (page_w, page_h), "white")
    draw = ImageDraw.Draw(page)
    y = MARGIN
    for line in lines:
        draw.text((MARGIN, y), line, fill="black", font=font)
        y += line_height + LINE_GAP
    return page


def write_sample(path: str | Path, texts: list[str]) -> Path:
    """Write ``texts`` to ``path``: a multi-page PDF if it ends in .pdf, else one image.

    Image formats other than PDF hold one page, so they take exactly one text.
    """
    path = Path(path)
    if not texts:
        raise ValueError("need at least one text")
    pages = [render_page(t) for t in texts]
    if path.suffix.lower() == ".pdf":
        pages[0].save(path, "PDF", save_all=True, append_images=pages[1:], resolution=PDF_RESOLUTION)
    elif len(pages) == 1:
        pages[0].save(path)
    else:
        raise ValueError(f"{path.name}: only a .pdf can hold more than one page")
    return path


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print(f"usage: {Path(sys.argv[0]).name} OUT.png|OUT.pdf TEXT [TEXT...]", file=sys.stderr)
        return 2
    try:
        out = write_sample(argv[0], argv[1:])
    except ValueError as exc:
        print(f"make_sample: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

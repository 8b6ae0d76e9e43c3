"""Pages the engine tests read: black text drawn on white, as PNG or PDF."""

from __future__ import annotations

import io
import re

from PIL import Image, ImageDraw, ImageFont

from documents.text_layer import TextLine

FONT = ImageFont.load_default(size=48)


def draw(rows, size=(900, 600)) -> Image.Image:
    """Black text on white; ``rows`` holds (x, y, text)."""
    image = Image.new("RGB", size, "white")
    pen = ImageDraw.Draw(image)
    for x, y, text in rows:
        pen.text((x, y), text, fill="black", font=FONT)
    return image


def png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def words(text: str) -> set[str]:
    return set(re.findall(r"[A-Z0-9]+", text.upper()))


HELLO_PNG = png(draw([(80, 120, "HELLO OCRGW 42"), (80, 320, "INVOICE 1234")]))


def two_page_pdf() -> bytes:
    first = draw([(80, 200, "FIRST PAGE 111")])
    second = draw([(80, 200, "SECOND PAGE 222")])
    buf = io.BytesIO()
    # 200 px per inch: the adapters draw a page at its image's resolution, so pages come back at this size.
    first.save(buf, "PDF", resolution=200, save_all=True, append_images=[second])
    return buf.getvalue()


class Progress(list):
    def __call__(self, done, total):
        self.append((done, total))


def source_lines(index: int) -> list[TextLine]:
    """The lines of page ``index`` of the real PDF behind tests/scans.py, boxed in its upright scan's pixels.

    A scan is the page drawn at ``SCAN_DPI``, which the adapters draw it at
    again (its image's pixels one to one): its text layer read at that dpi
    boxes each word where the upright scan shows it.
    """
    from documents.pages import open_document
    from tests.scans import SCAN_DPI, real_pdf

    with open_document(real_pdf(), "application/pdf", dpi=SCAN_DPI) as doc:
        layer = doc.text_layer(index)
    assert layer is not None
    return layer.lines


def source_words(index: int) -> list[tuple[str, tuple[int, int, int, int]]]:
    """The words of ``source_lines``, each with its box."""
    return [(word.text, word.bbox) for line in source_lines(index) for word in line.words]


def centre(box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def inside(inner, outer, slack: int = 0) -> bool:
    return (outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1]
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)  # fmt: skip


def placed_where_shown(read_words, truth, slack: int = 8) -> tuple[int, list]:
    """How many of ``read_words`` (text, box) name a word that occurs once in ``truth`` and sit on it; the misses."""
    once = {}
    for text, box in truth:
        once[text] = None if text in once else box
    matched, misses = 0, []
    for text, box in read_words:
        expected = once.get(text)
        if expected is None:
            continue
        x, y = centre(box)
        if expected[0] - slack <= x <= expected[2] + slack and expected[1] - slack <= y <= expected[3] + slack:
            matched += 1
        else:
            misses.append((text, box, expected))
    return matched, misses

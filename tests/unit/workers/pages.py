"""Pages the engine tests read: black text drawn on white, as PNG or PDF."""

from __future__ import annotations

import io
import re

from PIL import Image, ImageDraw, ImageFont

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
    # 200 px per inch, the adapters' rendering dpi: pages come back at this size.
    first.save(buf, "PDF", resolution=200, save_all=True, append_images=[second])
    return buf.getvalue()


class Progress(list):
    def __call__(self, done, total):
        self.append((done, total))

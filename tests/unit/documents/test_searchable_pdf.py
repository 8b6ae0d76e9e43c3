"""The searchable PDF: the original pages untouched, turned and straightened as read, with the words grafted on."""

from __future__ import annotations

import contextlib
import ctypes
import io
import random
import zlib
from functools import cache
from typing import Any

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image, ImageChops, ImageDraw, ImageOps, ImageStat

from documents.pages import open_document
from documents.searchable_pdf import SourceDocument, searchable_pdf
from jobs.errors import EncryptedDocument, InvalidDocument
from tests.ocr_layers import LEGEND, STALE_WORD, earlier_ocr_pdf, legend_box
from tests.pdfs import text_pdf
from tests.scans import POINTS_PER_INCH, SCAN_DPI, image_only_pdf, real_pdf, scanned_pages, source_text

PDF, JPEG, PNG, TIFF = "application/pdf", "image/jpeg", "image/png", "image/tiff"
SCALE = SCAN_DPI / POINTS_PER_INCH  # the engines' pixels per point
SKIP_REFERENCE = "Shared MIME-info Database"  # page 1's title, in the real PDF's words


# --- results made by hand, or from the real PDF's own text ------------------------------------


@cache
def layer_pages(pdf: bytes | None = None, *, read_as_is: bool = False) -> dict[int, dict]:
    """The real PDF's (or ``pdf``'s) text layer as OCR result pages, each line with its words where PDFium boxes them.

    The words are upper-cased, unless ``read_as_is``: OCR text the page's own text does not hold
    already (a page whose own text says what OCR read gets none added).
    """
    data = pdf or real_pdf()
    pages = {}
    with open_document(data, PDF) as document:
        for index in range(document.page_count):
            layer = document.text_layer(index)
            if layer is None:
                continue

            def read(text: str) -> str:
                return text if read_as_is else text.upper()

            lines = [
                {"text": read(line.text), "confidence": 0.9, "bbox": list(line.bbox),
                 "words": [{"text": read(w.text), "confidence": 0.9, "bbox": list(w.bbox)} for w in line.words]}
                for line in layer.lines
            ]  # fmt: skip
            pages[index] = ocr_page(index + 1, lines, layer.width, layer.height)
    return pages


def ocr_page(number, lines, width, height, rotation=0, skew=0.0, source="ocr") -> dict:
    return {"page": number, "text": "\n".join(line["text"] for line in lines), "source": source, "width": width,
            "height": height, "rotation": rotation, "skew": skew, "lines": lines}  # fmt: skip


def line(text, bbox, words=None) -> dict:
    return {"text": text, "confidence": 0.9, "bbox": list(bbox), **({"words": words} if words is not None else {})}


def first_words(page: dict, count: int) -> list[dict]:
    return [word for line in page["lines"] for word in line["words"] if len(word["text"]) > 3][:count]


# --- reading the output ----------------------------------------------------------------------------


def opened(data: bytes) -> pdfium.PdfDocument:
    assert data.startswith(b"%PDF-")
    return pdfium.PdfDocument(data)


def text_of(document: pdfium.PdfDocument, index: int) -> str:
    return document[index].get_textpage().get_text_range()


def text_at(document: pdfium.PdfDocument, index: int, bbox, width: int, height: int) -> str:
    """The text a reader extracts within a box given in pixels of the displayed page, ``width`` x ``height``."""
    page = document[index]
    page_width, page_height = page.get_size()
    sx, sy = page_width / width, page_height / height
    x0, y0, x1, y1 = bbox
    # A few points of slack around the box; get_text_bounded works in the page's own (unrotated) space.
    corners = [page_to_user(page, x * sx, y * sy) for x in (x0, x1) for y in (y0, y1)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return page.get_textpage().get_text_bounded(min(xs) + 1, min(ys) + 1, max(xs) - 1, max(ys) - 1)


def page_to_user(page: pdfium.PdfPage, x: float, y_from_top: float) -> tuple[float, float]:
    """A point of the displayed page (points from its top left) in the page's own space, as PDFium maps it."""
    width, height = page.get_size()
    user_x, user_y = ctypes.c_double(), ctypes.c_double()
    # At 100 device pixels a point, the rounding to whole pixels is below what matters.
    pdfium_c.FPDF_DeviceToPage(page, 0, 0, round(width * 100), round(height * 100), 0, round(x * 100),
                               round(y_from_top * 100), user_x, user_y)  # fmt: skip
    return user_x.value, user_y.value


def rendering(data: bytes, index: int, scale: float = SCALE) -> Image.Image:
    page = pdfium.PdfDocument(data)[index]
    return page.render(scale=scale, grayscale=True).to_pil().convert("L")


def difference(first: Image.Image, second: Image.Image) -> float:
    """The mean absolute grey difference of two images of about the same size (cropped to the smaller)."""
    size = (min(first.width, second.width), min(first.height, second.height))
    return ImageStat.Stat(ImageChops.difference(first.crop((0, 0, *size)), second.crop((0, 0, *size)))).mean[0]


_KEPT_OPEN: list[pikepdf.Pdf] = []


def aligned_difference(shown: Image.Image, expected: Image.Image, margin: int = 150, slack: int = 4) -> float:
    """The difference of the pages' middles, at the best shift of up to ``slack`` pixels.

    PDFium draws a turned image a pixel or three off where other readers
    (poppler) draw it; a page turned a degree the wrong way is off by far more,
    and by different amounts across the page.
    """
    inner = (margin, margin, expected.width - margin, expected.height - margin)
    target = expected.crop(inner)
    return min(
        difference(shown.crop((inner[0] + dx, inner[1] + dy, inner[2] + dx, inner[3] + dy)), target)
        for dx in range(-slack, slack + 1)
        for dy in range(-slack, slack + 1)
    )


def image_streams(data: bytes) -> list[pikepdf.Stream]:
    pdf = pikepdf.open(io.BytesIO(data))
    _KEPT_OPEN[:] = [pdf]  # the streams read from it: it stays open until the next call
    return [obj for obj in pdf.objects if isinstance(obj, pikepdf.Stream) and obj.get("/Subtype") == "/Image"]


def encoded(image: Image.Image, format: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format, **options)
    return buffer.getvalue()


def picture(size=(600, 400), mode="RGB") -> Image.Image:
    """An image no turn or mirror leaves the same: a dark block in its top left corner, a bar along the top."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 20, 200, 150), fill=(200, 30, 30))
    draw.rectangle((20, 180, size[0] - 20, 200), fill=(20, 20, 160))
    return image.convert(mode)


# --- a born-digital PDF ------------------------------------------------------------------------------------

OCR_PAGES = (1, 6, 12)


def test_a_born_digital_pdfs_ocr_pages_gain_no_second_copy_of_the_words_they_show():
    # Given OCR results that read the pages' own words again, where the pages show them (upper-cased, so
    # that the page's text does not say what OCR read: only where the words lie tells them apart)
    original = real_pdf()
    pages = {index: {**page, "source": "ocr" if index in OCR_PAGES else "text_layer"}
             for index, page in layer_pages().items()}  # fmt: skip

    data = searchable_pdf([SourceDocument(original, PDF, pages)])

    # Then every page keeps its size and its text, and no OCR word is drawn over a word the page shows
    assert len(data) <= 1.02 * len(original)
    before, after = opened(original), opened(data)
    assert len(after) == len(before) == 17
    for index in range(17):
        assert after[index].get_size() == before[index].get_size()
        assert text_of(after, index) == text_of(before, index)


def test_a_scans_ocr_pages_gain_their_words_at_their_boxes_and_only_they():
    # Given a scan of the real PDF, and OCR results for some of its pages: the real PDF's words at their boxes
    scan = image_only_pdf(scanned_pages(range(17)))
    pages = {index: layer_pages()[index] for index in OCR_PAGES}

    data = searchable_pdf([SourceDocument(scan, PDF, pages)])

    # Then only the OCR pages have text, and an OCR page's words are found at their boxes, once
    after = opened(data)
    assert [bool(text_of(after, index).strip()) for index in range(17)] == [i in OCR_PAGES for i in range(17)]
    for index in OCR_PAGES:
        page = pages[index]
        for word in first_words(page, 5):
            found = text_at(after, index, word["bbox"], page["width"], page["height"])
            assert found.count(word["text"]) == 1, (word, found)


def test_a_born_digital_pdf_read_by_ocr_as_it_says_gains_no_second_copy_of_its_text():
    original = real_pdf()

    data = searchable_pdf([SourceDocument(original, PDF, layer_pages(read_as_is=True))])

    assert len(data) <= 1.02 * len(original)
    before, after = opened(original), opened(data)
    assert [text_of(after, i) for i in range(17)] == [text_of(before, i) for i in range(17)]


def test_a_scan_with_a_few_words_stamped_on_it_still_gets_its_text():
    stamped = text_pdf("Bates 000123")
    words = "the whole page of scanned words that only OCR can read " * 3
    pages = {0: ocr_page(1, [line(words.strip(), (40, 400, 1600, 460)), line("Bates 000123", (40, 100, 400, 140))],
                         1700, 2200)}  # fmt: skip

    document = opened(searchable_pdf([SourceDocument(stamped, PDF, pages)]))

    assert text_of(document, 0).split() == ["Bates", "000123", *words.split(), "Bates", "000123"]


def test_a_born_digital_pdfs_untouched_pages_keep_their_content_streams_and_resources_byte_for_byte():
    original = real_pdf()
    # OCR read a word in page 2's bottom margin, where the page shows none.
    pages = {1: ocr_page(2, [line("STAMPED", (300, 2120, 500, 2160))], 1700, 2192)}

    data = searchable_pdf([SourceDocument(original, PDF, pages)])

    with pikepdf.open(io.BytesIO(original)) as before, pikepdf.open(io.BytesIO(data)) as after:
        for index in (0, 2, 16):
            old, new = before.pages[index], after.pages[index]
            assert [s.read_raw_bytes() for s in _streams(new.obj.Contents)] == [
                s.read_raw_bytes() for s in _streams(old.obj.Contents)
            ]
            assert sorted(new.resources.Font.keys()) == sorted(old.resources.Font.keys())
        old, new = before.pages[1], after.pages[1]
        # The OCR page's own streams are all still there, between the text layer's q and Q.
        old_streams = [s.read_raw_bytes() for s in _streams(old.obj.Contents)]
        new_streams = [s.read_raw_bytes() for s in _streams(new.obj.Contents)]
        assert new_streams[1:-1] == old_streams
        assert set(old.resources.Font.keys()) < set(new.resources.Font.keys())
        assert all(new.resources.Font[name].BaseFont == font.BaseFont for name, font in old.resources.Font.items())


def _streams(contents) -> list:
    return list(contents) if isinstance(contents, pikepdf.Array) else [contents]


def test_every_page_of_a_scan_can_take_words_and_the_pdf_stays_its_size():
    scan = image_only_pdf(scanned_pages(range(17)))

    data = searchable_pdf([SourceDocument(scan, PDF, layer_pages())])

    # Every page OCRed: the words of this text-dense document (each word its codes, a scaling and a
    # displacement) weigh little beside the scan; the pages themselves are not copied again.
    assert len(data) <= 1.1 * len(scan)
    after, before = opened(data), opened(scan)
    assert [after[i].get_size() for i in range(17)] == [before[i].get_size() for i in range(17)]
    # Each page's words are its text, in reading order with spaces.
    for index in (0, 8):
        words = [w["text"] for line_ in layer_pages()[index]["lines"] for w in line_["words"]]
        assert text_of(after, index).split() == words


def test_a_font_name_the_page_uses_already_is_left_to_it():
    with pikepdf.open(io.BytesIO(text_pdf("hello"))) as pdf:
        page = pdf.pages[0]
        (existing,) = page.resources.Font.values()
        page.resources.Font["/OCRgwText"] = existing
        buffer = io.BytesIO()
        pdf.save(buffer)
    data = buffer.getvalue()
    pages = {0: ocr_page(1, [line("grafted words", (200, 400, 800, 460))], 1700, 2200)}

    result = opened(searchable_pdf([SourceDocument(data, PDF, pages)]))

    assert text_of(result, 0).split() == ["hello", "grafted", "words"]
    with pikepdf.open(io.BytesIO(searchable_pdf([SourceDocument(data, PDF, pages)]))) as pdf:
        fonts = pdf.pages[0].resources.Font
        assert fonts["/OCRgwText"].BaseFont != "/GlyphLessFont"
        assert fonts["/OCRgwText1"].BaseFont == "/GlyphLessFont"


# --- images as they came ------------------------------------------------------------------------------------


def test_a_jpeg_goes_in_byte_for_byte_sized_from_its_resolution_with_its_words():
    (scan,) = scanned_pages([0])
    page = layer_pages()[0]

    data = searchable_pdf([SourceDocument(scan.jpeg, JPEG, {0: page})])

    (stream,) = image_streams(data)
    assert stream.read_raw_bytes() == scan.jpeg
    assert stream.Filter == "/DCTDecode"
    width, height = Image.open(io.BytesIO(scan.jpeg)).size
    document = opened(data)
    assert document[0].get_size() == pytest.approx((width / SCALE, height / SCALE), abs=0.01)
    assert len(data) <= 1.1 * len(scan.jpeg) + len(zlib.compress(page["text"].encode("utf-16-be")))
    words = [w["text"] for line_ in page["lines"] for w in line_["words"]]
    assert text_of(document, 0).split() == words
    for word in first_words(page, 8):
        assert text_at(document, 0, word["bbox"], page["width"], page["height"]).strip() == word["text"]


def test_a_jpeg_without_a_resolution_is_taken_at_200_dpi_and_one_with_300_keeps_its_size():
    image = picture()
    plain, fine = encoded(image, "JPEG"), encoded(image, "JPEG", dpi=(300, 300))

    document = opened(searchable_pdf([SourceDocument(plain, JPEG, {}), SourceDocument(fine, JPEG, {})]))

    assert document[0].get_size() == pytest.approx((600 * 72 / 200, 400 * 72 / 200), abs=0.01)
    assert document[1].get_size() == pytest.approx((600 * 72 / 300, 400 * 72 / 300), abs=0.01)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_an_exif_oriented_jpeg_shows_as_the_engines_read_it_without_touching_its_bytes(orientation):
    stored = picture()
    exif = Image.Exif()
    exif[0x0112] = orientation
    jpeg = encoded(stored, "JPEG", quality=95, exif=exif.tobytes())
    upright = ImageOps.exif_transpose(Image.open(io.BytesIO(jpeg))).convert("L")
    # A word on the dark block, which is where the engines saw it once the image is upright.
    block = _dark_box(upright)
    pages = {0: ocr_page(1, [line("block", block)], upright.width, upright.height)}

    data = searchable_pdf([SourceDocument(jpeg, JPEG, pages)])

    (stream,) = image_streams(data)
    assert stream.read_raw_bytes() == jpeg
    shown = rendering(data, 0)
    assert shown.size == upright.size
    assert difference(shown, upright) < 3
    assert text_at(opened(data), 0, block, upright.width, upright.height).strip() == "block"


def _dark_box(image: Image.Image) -> tuple[int, int, int, int]:
    box = image.point(lambda v: 255 if v < 140 and v > 60 else 0).getbbox()
    assert box is not None
    return box


def test_an_adobe_cmyk_jpeg_shows_its_colours():
    image = picture(mode="CMYK")
    jpeg = encoded(image, "JPEG", quality=95)
    assert "adobe" in Image.open(io.BytesIO(jpeg)).info

    data = searchable_pdf([SourceDocument(jpeg, JPEG, {})])

    (stream,) = image_streams(data)
    assert stream.read_raw_bytes() == jpeg
    assert list(stream.Decode) == [1, 0, 1, 0, 1, 0, 1, 0]
    expected = Image.open(io.BytesIO(jpeg)).convert("RGB").convert("L")
    assert difference(rendering(data, 0), expected) < 6


@pytest.mark.parametrize(
    "mode, options",
    [("RGB", {}), ("L", {}), ("1", {}), ("P", {}), ("RGBA", {}), ("LA", {}), ("RGB", {"interlace": 1}), ("I;16", {})],
)
def test_a_png_is_stored_losslessly_at_its_size(mode, options):
    image = picture(mode="RGB")
    if mode == "P":
        image = image.quantize(16)
    elif mode == "I;16":
        image = _sixteen_bit()
    elif mode in ("RGBA", "LA"):
        image = image.convert(mode)
        image.putalpha(200)
    else:
        image = image.convert(mode)
    png = encoded(image, "PNG", dpi=(150, 150), **options)

    data = searchable_pdf([SourceDocument(png, PNG, {})])

    streams = image_streams(data)
    main = next(s for s in streams if "/SMask" in s or len(streams) == 1)
    back = pikepdf.PdfImage(main).as_pil_image()
    assert back.size == image.size
    expected = Image.open(io.BytesIO(png))
    if mode in ("RGBA", "LA"):
        assert main.read_bytes() == expected.convert(mode[:-1]).tobytes()
        assert main.SMask.read_bytes() == expected.getchannel("A").tobytes()
    elif mode == "P":
        assert back.convert("RGB").tobytes() == expected.convert("RGB").tobytes()
    elif mode == "1":
        assert main.BitsPerComponent == 1
        assert back.convert("L").tobytes() == expected.convert("L").tobytes()
    elif mode == "I;16":
        assert main.BitsPerComponent == 16
    else:
        assert back.tobytes() == expected.tobytes()
    assert opened(data)[0].get_size() == pytest.approx((image.width * 72 / 150, image.height * 72 / 150), rel=1e-3)
    if not options and mode not in ("RGBA", "LA"):
        assert len(data) <= 1.1 * len(png) + 2000  # the PNG's own compressed data, and the PDF's few objects


def _sixteen_bit() -> Image.Image:
    image = Image.new("I;16", (300, 200))
    image.putdata([(x * 200 + y) % 65536 for y in range(200) for x in range(300)])
    return image


def test_a_multi_page_tiff_is_one_page_a_frame_and_a_1_bit_frame_stays_1_bit():
    frames = [picture(mode="1"), picture(size=(300, 500), mode="L")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "TIFF", save_all=True, append_images=frames[1:], compression="tiff_deflate", dpi=(300, 300))
    pages = {1: ocr_page(2, [line("second", (20, 20, 200, 150))], 300, 500)}

    data = searchable_pdf([SourceDocument(buffer.getvalue(), TIFF, pages)])

    document = opened(data)
    assert len(document) == 2
    assert [text_of(document, 0), text_of(document, 1)] == ["", "second"]
    assert sorted(int(s.BitsPerComponent) for s in image_streams(data)) == [1, 8]
    assert difference(rendering(data, 0, 300 / 72), frames[0].convert("L")) < 1


@pytest.mark.parametrize("photometric", [0, 1])  # min-is-white (a fax's), min-is-black (Pillow's)
def test_a_bilevel_tiff_scan_stays_group_4_and_its_size(photometric):
    frames = [
        Image.open(io.BytesIO(scan.jpeg)).convert("L").point(lambda v: 255 if v > 128 else 0).convert("1")
        for scan in scanned_pages([0, 3])
    ]
    buffer = io.BytesIO()
    frames[0].save(buffer, "TIFF", compression="group4", save_all=True, append_images=frames[1:],
                   dpi=(200, 200), tiffinfo={262: photometric})  # fmt: skip
    tiff = buffer.getvalue()

    data = searchable_pdf([SourceDocument(tiff, TIFF, {})])

    assert len(data) <= 1.1 * len(tiff)
    assert [str(stream.Filter) for stream in image_streams(data)] == ["/CCITTFaxDecode"] * 2
    assert difference(rendering(data, 1), frames[1].convert("L")) < 4  # black on white, not white on black


@pytest.mark.parametrize("mode", ["L", "RGB", "YCbCr"])  # TIFF's photometric 1, 2 and 6
def test_a_jpeg_tiff_scan_keeps_its_jpeg_and_its_size(mode):
    (scan,) = scanned_pages([2], skewed={2: 3.0})
    grey = Image.open(io.BytesIO(scan.jpeg)).convert("L")
    pixels = grey if mode == "L" else ImageOps.colorize(grey, black=(20, 10, 60), white=(250, 240, 220)).convert(mode)
    buffer = io.BytesIO()
    pixels.save(buffer, "TIFF", compression="jpeg", quality=80, dpi=(200, 200), tiffinfo={278: pixels.height})
    tiff = buffer.getvalue()

    data = searchable_pdf([SourceDocument(tiff, TIFF, {})])

    # Its pixels stored losslessly would be half as large again as the TIFF.
    assert len(data) <= 1.01 * len(tiff)
    (stream,) = image_streams(data)
    assert str(stream.Filter) == "/DCTDecode"
    page = pdfium.PdfDocument(data)[0]
    shown = page.render(scale=grey.width / page.get_width()).to_pil().convert("RGB")
    with Image.open(io.BytesIO(tiff)) as decoded:
        assert ImageChops.difference(shown, decoded.convert("RGB")).getbbox() is None  # the very same pixels


# --- turned and skewed scans ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "turned, skewed", [(0, 0.0), (90, 0.0), (180, 0.0), (270, 0.0), (0, 3.0), (90, -2.5), (180, 2.0), (270, 4.0)]
)
def test_a_turned_or_skewed_scan_shows_upright_with_its_words_on_them(turned, skewed):
    (scan,) = scanned_pages([0], turned={0: turned}, skewed={0: skewed})
    scanned = image_only_pdf([scan])
    page = {**layer_pages()[0], "rotation": (360 - turned) % 360, "skew": -skewed}

    data = searchable_pdf([SourceDocument(scanned, PDF, {0: page})])

    with pikepdf.open(io.BytesIO(data)) as pdf:
        assert int(pdf.pages[0].obj.get("/Rotate", 0)) == (360 - turned) % 360
    (stream,) = image_streams(data)
    assert stream.read_raw_bytes() == scan.jpeg
    shown, source = rendering(data, 0), rendering(real_pdf(), 0)
    assert abs(shown.width - source.width) <= 2 and abs(shown.height - source.height) <= 2
    # Straightened, the page is the source page but for the corners a turn cuts off and the JPEG's noise;
    # a skewed page's words are blurred by two turns (the scanner's, the reader's). Turned 30% too little or
    # too much, the difference is 14 or more; not straightened at all, 17 or more.
    assert aligned_difference(shown, source) < (10 if skewed else 4)
    document = opened(data)
    for word in first_words(page, 6):
        assert text_at(document, 0, word["bbox"], page["width"], page["height"]).strip() == word["text"]


def test_a_page_with_its_own_rotate_keeps_it_and_adds_the_results():
    data = _with_rotate(text_pdf("sideways"), 90)
    layer = layer_pages(data)[0]
    # The engines read it as displayed (turned by its /Rotate) and turned it a half turn more.
    page = {**layer, "rotation": 180}

    result = searchable_pdf([SourceDocument(data, PDF, {0: page})])

    with pikepdf.open(io.BytesIO(result)) as pdf:
        assert int(pdf.pages[0].obj.Rotate) == 270
    document = opened(result)
    # The words' boxes are in the page as it is now displayed (upright); its own word turned with it.
    width, height = layer["width"], layer["height"]
    for word in first_words(layer, 1):
        x0, y0, x1, y1 = word["bbox"]
        assert text_at(document, 0, (x0, y0, x1, y1), width, height) == word["text"]
        assert text_at(document, 0, (width - x1, height - y1, width - x0, height - y0), width, height) == "sideways"


def _with_rotate(data: bytes, degrees: int) -> bytes:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            page.obj.Rotate = degrees
        buffer = io.BytesIO()
        pdf.save(buffer)
        return buffer.getvalue()


# --- groups -----------------------------------------------------------------------------------------------


def test_several_documents_follow_each_other_and_each_keeps_its_objects_once():
    first, second = text_pdf("one", "two"), text_pdf("three")
    jpeg = scanned_pages([0])[0].jpeg
    sources = [
        SourceDocument(first, PDF, {1: ocr_page(2, [line("second page", (200, 400, 800, 460))], 1700, 2200)}),
        SourceDocument(jpeg, JPEG, {0: ocr_page(1, [line("scanned", (100, 100, 400, 160))], 1700, 2200)}),
        SourceDocument(second, PDF, {}),
    ]

    data = searchable_pdf(sources)

    document = opened(data)
    assert [text_of(document, i).split() for i in range(4)] == [
        ["one"],
        ["two", "second", "page"],
        ["scanned"],
        ["three"],
    ]
    with pikepdf.open(io.BytesIO(data)) as pdf:
        fonts = [obj for obj in pdf.objects if isinstance(obj, pikepdf.Dictionary) and obj.get("/Type") == "/Font"]
        # Helvetica once for each PDF (its two pages share it), the glyphless font and its descendant once.
        assert sorted(str(font.BaseFont) for font in fonts) == [
            "/GlyphLessFont",
            "/GlyphLessFont",
            "/Helvetica",
            "/Helvetica",
        ]


def test_only_the_chosen_pages_go_in_in_the_order_given():
    original = real_pdf()

    # OCR read a word in page 4's bottom margin, where the page shows none.
    stamped = ocr_page(4, [line("STAMPED", (300, 2120, 500, 2160))], 1700, 2192)

    data = searchable_pdf([SourceDocument(original, PDF, {3: stamped}, only=[3, 1])])

    document = opened(data)
    assert len(document) == 2
    assert text_of(document, 0).startswith(source_text(3))
    assert text_of(document, 0)[len(source_text(3)) :].split() == ["STAMPED"]  # the grafted word
    assert text_of(document, 1) == source_text(1)
    assert len(data) < len(original)


def test_only_the_chosen_frames_of_an_image_go_in():
    buffer = io.BytesIO()
    picture().save(buffer, "TIFF", save_all=True, append_images=[picture(size=(300, 300))])
    pages = {1: ocr_page(2, [line("kept", (20, 20, 200, 150))], 300, 300)}

    document = opened(searchable_pdf([SourceDocument(buffer.getvalue(), TIFF, pages, only=[1])]))

    assert len(document) == 1
    assert text_of(document, 0) == "kept"


# --- odd results and bad documents ------------------------------------------------------------------------


def test_any_script_survives_and_control_characters_become_replacement_characters():
    text = "Ελληνικά 中文 ünïcödé 😀 (paren) back\\slash tab\there \x07bell"
    pages = {0: ocr_page(1, [line(text, (40, 40, 1500, 90))], 1700, 2200)}

    document = opened(searchable_pdf([SourceDocument(text_pdf(""), PDF, pages)]))

    assert text_of(document, 0) == "Ελληνικά 中文 ünïcödé 😀 (paren) back\\slash tab here \ufffdbell"


def test_odd_page_results_never_fail_the_build():
    lines = [
        line("no box", (0, 0, 0, 0)),
        line("", (40, 40, 140, 70)),
        {"text": None, "bbox": "wide"},
        {"bbox": [1, 2, 3]},
        "not a line",
        line("outside", (5000, 5000, 6000, 6000)),
        line("partly outside", (-100, -50, 300, 30)),
        line("kept", (40, 120, 140, 150), words=[{"text": "kept", "bbox": [40, 120, 140, 150]}, {"text": 7}, "x"]),
        line("words without boxes", (40, 200, 400, 240), words=[{"text": "words"}, {"bbox": [0, 0, 1, 1]}]),
    ]
    results: dict[int, Any] = {
        0: {"page": 1, "lines": lines},  # no size, no rotation, no skew
        1: {
            "page": 2,
            "lines": [line("turned", (40, 40, 140, 70))],
            "width": "wide",
            "height": None,
            "rotation": 45,
            "skew": float("nan"),
        },
        2: {"page": 3, "lines": "none", "rotation": True, "width": 0, "height": -5},
        3: "not a page",
    }

    document = opened(searchable_pdf([SourceDocument(text_pdf("a", "b", "c", "d"), PDF, results)]))

    assert text_of(document, 0).split() == ["a", "partly", "outside", "kept", "words", "without", "boxes"]
    assert text_of(document, 1).split() == ["b", "turned"]
    assert [text_of(document, 2), text_of(document, 3)] == ["c", "d"]


def _encrypted() -> bytes:
    with pikepdf.open(io.BytesIO(text_pdf("secret"))) as pdf:
        buffer = io.BytesIO()
        pdf.save(buffer, encryption=pikepdf.Encryption(user="user", owner="owner"))
        return buffer.getvalue()


@pytest.mark.parametrize(
    "source",
    [
        SourceDocument(b"not a pdf at all", PDF, {}),
        SourceDocument(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF", PDF, {}),
        SourceDocument(text_pdf("cut")[:200], PDF, {}),
        SourceDocument(b"not an image", PNG, {}),
        SourceDocument(encoded(picture(), "PNG")[:60], PNG, {0: ocr_page(1, [], 600, 400)}),
        SourceDocument(encoded(picture(), "JPEG")[:100], JPEG, {}),
        SourceDocument(text_pdf("one"), PDF, {}, only=[1]),
        SourceDocument(encoded(picture(), "PNG"), PNG, {}, only=[-1]),
        SourceDocument(text_pdf("one"), "text/plain", {}),
    ],
    ids=[
        "garbage",
        "no-pages",
        "truncated",
        "not-an-image",
        "cut-png",
        "cut-jpeg",
        "page-out-of-range",
        "frame-out-of-range",
        "not-a-document",
    ],
)
def test_a_document_that_cannot_be_read_raises_invalid_document(source):
    with pytest.raises(InvalidDocument):
        searchable_pdf([source, SourceDocument(text_pdf("fine"), PDF, {})])
    with pytest.raises(InvalidDocument):
        searchable_pdf([source])


def test_an_encrypted_pdf_and_no_documents_raise_invalid_document():
    with pytest.raises(EncryptedDocument, match="remove the encryption first"):
        searchable_pdf([SourceDocument(_encrypted(), PDF, {})])
    with pytest.raises(InvalidDocument):
        searchable_pdf([])


def test_a_pdf_with_an_owner_password_only_comes_out_readable_and_unencrypted():
    with pikepdf.open(io.BytesIO(image_only_pdf(scanned_pages([0])))) as pdf:
        buffer = io.BytesIO()
        restricted = pikepdf.Permissions(extract=False, modify_other=False)
        pdf.save(buffer, encryption=pikepdf.Encryption(user="", owner="owner", R=6, allow=restricted))
    owner_only = buffer.getvalue()

    data = searchable_pdf([SourceDocument(owner_only, PDF, {0: layer_pages()[0]})])

    with pikepdf.open(io.BytesIO(data)) as out, pikepdf.open(io.BytesIO(owner_only)) as original:
        assert not out.is_encrypted
        assert original.is_encrypted
        scan = original.pages[0].resources.XObject["/Scan"].read_raw_bytes()
        assert out.pages[0].resources.XObject["/Scan"].read_raw_bytes() == scan
    assert "SHARED MIME-INFO DATABASE" in text_of(opened(data), 0)


# --- a PDF OCRed before ----------------------------------------------------------------------------


def earlier_results(pdf: bytes, **changes: Any) -> dict[int, dict]:
    """What OCR reads again on the pages of an ``earlier_ocr_pdf``: each page's words and the legend's."""
    from tests.ocr_layers import _earlier_result

    results = {}
    for number, index in enumerate((0, 3)):
        result = _earlier_result(number, index, LEGEND)
        result["lines"] = [line_ for line_ in result["lines"] if line_["text"] != STALE_WORD]
        results[number] = {**result, **changes}
    return results


def test_an_ocred_pdf_ocred_again_has_each_word_once_and_its_printed_legend_untouched():
    document = earlier_ocr_pdf([0, 3])
    before = [text_of(opened(document), index) for index in range(2)]

    data = searchable_pdf([SourceDocument(document, PDF, earlier_results(document))])

    after = opened(data)
    with pikepdf.open(io.BytesIO(document)) as old, pikepdf.open(io.BytesIO(data)) as new:
        for index in range(2):
            text = text_of(after, index)
            # The earlier layer is gone (its stale word with it); the new one holds the page's words once.
            assert STALE_WORD in before[index] and STALE_WORD not in text
            assert text.count("ZEPHYR") == 1 and before[index].count("ZEPHYR") == 2
            source_words = source_text((0, 3)[index]).split()
            assert sorted(text.split()) == sorted(source_words + LEGEND.split())
            # The scan's bytes and the legend's own stream are as they were, the legend drawn where it was.
            assert new.pages[index].resources.XObject["/Scan"].read_raw_bytes() == (
                old.pages[index].resources.XObject["/Scan"].read_raw_bytes()
            )
            (legend_stream,) = [
                s.read_raw_bytes() for s in _streams(old.pages[index].obj.Contents) if b"/Legend" in s.read_bytes()
            ]
            assert legend_stream in [s.read_raw_bytes() for s in _streams(new.pages[index].obj.Contents)]
    legend = legend_box(1700, 2200)
    assert difference(rendering(document, 0).crop(legend), rendering(data, 0).crop(legend)) < 1


def test_a_redo_results_lines_from_the_pages_own_text_are_not_drawn_again():
    document = earlier_ocr_pdf([0, 3])
    results = earlier_results(document)
    for result in results.values():
        for line_ in result["lines"]:
            if line_["text"] == LEGEND:
                line_["source"] = "text_layer"
                line_["bbox"] = [0, 0, 300, 40]  # even where the page shows nothing: the page draws it itself

    data = searchable_pdf([SourceDocument(document, PDF, results)])

    assert [text_of(opened(data), index).count("ZEPHYR") for index in range(2)] == [1, 1]


def test_a_redo_pages_ocr_words_beside_its_text_are_drawn_even_when_the_body_says_them_too():
    original = real_pdf()
    own = layer_pages(original, read_as_is=True)[1]
    body = [{**line_, "source": "text_layer"} for line_ in own["lines"]]
    # What OCR read beside the page's text (a figure's labels, say) in the bottom margin: words the body has too.
    labels = " ".join(own["text"].split()[:3])
    result = ocr_page(2, [*body, line(labels, (300, 2120, 900, 2160))], own["width"], own["height"])

    data = searchable_pdf([SourceDocument(original, PDF, {1: result})])

    before, after = text_of(opened(original), 1), text_of(opened(data), 1)
    assert after.split() == before.split() + labels.split()


def test_a_page_answered_from_its_text_keeps_its_earlier_layer():
    document = earlier_ocr_pdf([0, 3])
    results = earlier_results(document)
    results[1] = {**results[1], "source": "text_layer"}

    data = searchable_pdf([SourceDocument(document, PDF, results)])

    assert STALE_WORD not in text_of(opened(data), 0)
    assert text_of(opened(data), 1) == text_of(opened(document), 1)


def test_one_document_in_several_parts_is_copied_once():
    original = real_pdf()
    halves = [
        SourceDocument(original, PDF, {}, only=list(range(9))),
        SourceDocument(original, PDF, {}, only=list(range(9, 17))),
    ]

    data = searchable_pdf(halves)

    assert len(opened(data)) == 17
    assert len(data) <= len(original)  # the fonts the halves share once, and no outline


@pytest.mark.parametrize("content_type", [PDF, JPEG, PNG])
def test_a_damaged_document_makes_a_pdf_or_raises_invalid_document_never_anything_else(content_type):
    intact = {PDF: text_pdf("hello", "world"), JPEG: scanned_pages([0])[0].jpeg, PNG: encoded(picture(), "PNG")}
    pages = {0: layer_pages()[0], 1: layer_pages()[1]}
    rng = random.Random(content_type)
    for _ in range(40):
        damaged = bytearray(intact[content_type])
        for _ in range(rng.randint(1, 20)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[: rng.randrange(len(damaged))]
        with contextlib.suppress(InvalidDocument):  # qpdf mends much; a JPEG is not decoded at all
            assert searchable_pdf([SourceDocument(bytes(damaged), content_type, pages)]).startswith(b"%PDF-")

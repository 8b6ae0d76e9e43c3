"""The optimize levels on real documents: each draws the same pages, keeps its text, and is no larger.

Level 1 must draw every page pixel for pixel as before; level 2 within a
mean grey difference of ``LOSSY_MEAN_DIFFERENCE`` a page (a JPEG at quality
75 of a 200-dpi scan, drawn at 100 dpi, differs by under one level; a page
with its image left out, or drawn inverted, by tens).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from functools import cache

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image

from documents import optimize as optimize_module
from documents.optimize import optimize
from documents.searchable_pdf import SourceDocument, _saved, searchable_pdf
from tests.scans import SCAN_DPI, image_only_pdf, page_texts, real_pdf, scanned_pages
from tests.unit.documents.test_searchable_pdf import layer_pages

PDF = "application/pdf"
#: Pages are compared drawn at this resolution.
COMPARED_DPI = 100
#: Level 2's pages may differ from level 1's by this mean absolute grey difference (of 255) at most.
LOSSY_MEAN_DIFFERENCE = 2.0
#: Two pages of the source, scanned (one turned, one skewed), as the scan benchmark's pages are.
SCANNED = {0: (0, 0.0), 3: (90, 0.0), 5: (0, -2.0)}


# --- documents ------------------------------------------------------------------------------------


@cache
def scans() -> tuple:
    return tuple(
        scanned_pages(list(SCANNED), turned={i: t for i, (t, _) in SCANNED.items()},
                      skewed={i: s for i, (_, s) in SCANNED.items()})
    )  # fmt: skip


@cache
def searchable_scan() -> bytes:
    """A scan made searchable as ocrgw makes it: the scan's JPEGs as they were, the real PDF's words over them."""
    layers = layer_pages()
    results = {}
    for position, (index, (turned, skewed)) in enumerate(SCANNED.items()):
        results[position] = {**layers[index], "rotation": (360 - turned) % 360, "skew": -skewed}
    return searchable_pdf([SourceDocument(image_only_pdf(list(scans())), PDF, results)])


@cache
def bitonal_page() -> Image.Image:
    """The real PDF's first page at the scan resolution, thresholded, as a black-and-white scanner stores it."""
    page = pdfium.PdfDocument(real_pdf())[0]
    grey = page.render(scale=SCAN_DPI / 72, grayscale=True).to_pil().convert("L")
    return grey.point(lambda value: 255 if value > 160 else 0).convert("1")


def image_stream(pdf: pikepdf.Pdf, pixels: Image.Image, **entries) -> pikepdf.Stream:
    """``pixels`` as an image XObject, Flate-compressed at zlib's default level, as PDF writers store them."""
    spaces = {"1": pikepdf.Name.DeviceGray, "L": pikepdf.Name.DeviceGray, "RGB": pikepdf.Name.DeviceRGB}
    stream = pikepdf.Stream(pdf, zlib.compress(pixels.tobytes()))
    stream.Type, stream.Subtype, stream.Filter = pikepdf.Name.XObject, pikepdf.Name.Image, pikepdf.Name.FlateDecode
    stream.Width, stream.Height = pixels.size
    stream.BitsPerComponent = 1 if pixels.mode == "1" else 8
    if not entries.get("ImageMask"):
        stream.ColorSpace = spaces[pixels.mode]
    for key, value in entries.items():
        stream[f"/{key}"] = value
    return stream


def add_page(pdf: pikepdf.Pdf, size: tuple[float, float], xobjects: dict, content: bytes) -> None:
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, *size],
                Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(xobjects)),
                Contents=pikepdf.Stream(pdf, content),
            )
        )
    )


def saved(pdf: pikepdf.Pdf) -> bytes:
    return _saved(pdf)


@cache
def bitonal_pdf() -> bytes:
    """The bitonal page three times: on two pages as two identical objects, and on a third inside a form XObject."""
    bitmap = bitonal_page()
    size = (bitmap.width * 72 / SCAN_DPI, bitmap.height * 72 / SCAN_DPI)
    draw = f"q {size[0]:.3f} 0 0 {size[1]:.3f} 0 0 cm /Im0 Do Q".encode()
    pdf = pikepdf.new()
    for _ in range(2):
        add_page(pdf, size, {"/Im0": image_stream(pdf, bitmap)}, draw)
    form = pikepdf.Stream(pdf, draw)
    form.Type, form.Subtype, form.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, *size]
    form.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=image_stream(pdf, bitmap)))
    add_page(pdf, size, {"/Fm0": form}, b"q /Fm0 Do Q")
    return saved(pdf)


@cache
def grey_page() -> Image.Image:
    page = pdfium.PdfDocument(image_only_pdf([scans()[0]]))[0]
    return page.render(scale=SCAN_DPI / 72, grayscale=True).to_pil().convert("L")


def optimized(data: bytes, level: int) -> bytes:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        optimize(pdf, level)
        return saved(pdf)


# --- reading the output ---------------------------------------------------------------------------


def drawn(data: bytes) -> list[np.ndarray]:
    document = pdfium.PdfDocument(data)
    return [
        np.asarray(page.render(scale=COMPARED_DPI / 72, grayscale=True).to_pil().convert("L"), dtype=np.int16)
        for page in document
    ]


def images(data: bytes) -> list[pikepdf.Stream]:
    pdf = pikepdf.open(io.BytesIO(data))
    _KEPT_OPEN[:] = [pdf]
    return [obj for obj in pdf.objects if isinstance(obj, pikepdf.Stream) and obj.get("/Subtype") == "/Image"]


_KEPT_OPEN: list[pikepdf.Pdf] = []


def filters(stream: pikepdf.Object) -> list[str]:
    value = stream.get("/Filter")
    return [str(v) for v in value] if isinstance(value, pikepdf.Array) else [str(value)]


def jpeg_of(stream: pikepdf.Stream) -> bytes:
    """The JPEG an image stream holds, unwrapped from its Flate layer if it has one."""
    raw = bytes(stream.read_raw_bytes())
    return zlib.decompress(raw) if filters(stream) == ["/FlateDecode", "/DCTDecode"] else raw


def assert_draws_the_same(before: bytes, after: bytes, level: int) -> None:
    pages_before, pages_after = drawn(before), drawn(after)
    assert len(pages_after) == len(pages_before)
    for number, (first, second) in enumerate(zip(pages_before, pages_after, strict=True), 1):
        assert first.shape == second.shape, f"page {number}"
        if level == 1:
            assert np.array_equal(first, second), f"page {number} is not drawn pixel for pixel as before"
        else:
            mean = float(np.abs(first - second).mean())
            assert mean < LOSSY_MEAN_DIFFERENCE, f"page {number}: mean difference {mean:.2f}"


# --- every level, on every document ---------------------------------------------------------------


@pytest.mark.parametrize("document", ["scan", "bitonal", "real"])
@pytest.mark.parametrize("level", [1, 2])
def test_a_level_draws_the_same_pages_keeps_the_text_and_is_no_larger(document, level):
    made: dict[str, Callable[[], bytes]] = {"scan": searchable_scan, "bitonal": bitonal_pdf, "real": real_pdf}
    data = made[document]()

    smaller = optimized(data, level)

    assert smaller.startswith(b"%PDF-")
    assert len(smaller) <= len(data)
    assert_draws_the_same(data, smaller, level)
    assert page_texts(smaller) == page_texts(data)


def test_by_default_a_scan_comes_back_its_images_byte_for_byte_within_a_twentieth_of_its_size():
    scan = image_only_pdf(list(scans()))

    searchable = searchable_scan()

    assert sorted(jpeg_of(stream) for stream in images(searchable)) == sorted(page.jpeg for page in scans())
    assert len(searchable) <= 1.05 * len(scan)  # the text of three pages is about 10 KB of it


def test_level_0_changes_nothing():
    data = searchable_scan()

    assert optimized(data, 0) == saved(pikepdf.open(io.BytesIO(data)))


@pytest.mark.parametrize("level", [-1, 3, "2"])
def test_a_level_outside_0_1_2_is_refused(level):
    with pikepdf.open(io.BytesIO(real_pdf())) as pdf, pytest.raises(ValueError, match="optimization level"):
        optimize(pdf, level)


# --- level 1: lossless ----------------------------------------------------------------------------


def test_level_1_stores_a_bitonal_image_in_group_4_once_wherever_it_is_drawn():
    data = bitonal_pdf()

    smaller = optimized(data, 1)

    (stream,) = images(smaller)  # two pages' copies and the form's: one image
    assert filters(stream) == ["/CCITTFaxDecode"]
    assert stream.DecodeParms.K == -1
    assert len(smaller) < len(data) / 2
    with pikepdf.open(io.BytesIO(smaller)) as pdf:
        page_image = pdf.pages[0].Resources.XObject.Im0
        form_image = pdf.pages[2].Resources.XObject.Fm0.Resources.XObject.Im0
        assert page_image.objgen == form_image.objgen == pdf.pages[1].Resources.XObject.Im0.objgen


def test_level_1_never_encodes_a_jpeg_again():
    smaller = optimized(searchable_scan(), 1)

    kept = sorted(jpeg_of(stream) for stream in images(smaller))
    assert kept == sorted(page.jpeg for page in scans())
    # Flate takes a tenth off these JPEGs (their Huffman code is the standard one), as OCRmyPDF's level 1 does.
    assert all(filters(stream) == ["/FlateDecode", "/DCTDecode"] for stream in images(smaller))


def test_level_1_compresses_the_text_layer_again_without_changing_it():
    data = searchable_scan()

    smaller = optimized(data, 1)

    with pikepdf.open(io.BytesIO(data)) as before, pikepdf.open(io.BytesIO(smaller)) as after:
        for page_before, page_after in zip(before.pages, after.pages, strict=True):
            contents_before = [s.read_bytes() for s in page_before.obj.Contents]
            contents_after = [s.read_bytes() for s in page_after.obj.Contents]
            assert contents_after == contents_before
            assert all(filters(stream) == ["/FlateDecode"] for stream in page_after.obj.Contents)


def test_a_stream_that_would_inflate_past_the_bound_is_left_as_it_came(monkeypatch):
    monkeypatch.setattr(optimize_module, "MAX_INFLATED_BYTES", 1024 * 1024)
    pdf = pikepdf.new()
    add_page(pdf, (200, 200), {}, b"0 0 m 200 200 l S\n" * 50)
    bomb = pikepdf.Stream(pdf, zlib.compress(b"%" * (4 * 1024 * 1024), 1))
    bomb.Filter = pikepdf.Name.FlateDecode
    pdf.pages[0].obj.Contents = pdf.make_indirect(pikepdf.Array([pdf.pages[0].obj.Contents, bomb]))
    data = saved(pdf)

    smaller = optimized(data, 1)

    with pikepdf.open(io.BytesIO(data)) as before, pikepdf.open(io.BytesIO(smaller)) as after:
        assert after.pages[0].obj.Contents[1].read_raw_bytes() == before.pages[0].obj.Contents[1].read_raw_bytes()
        assert after.pages[0].obj.Contents[0].Filter == "/FlateDecode"  # the page's other stream is compressed


# --- level 2: JPEG where smaller ------------------------------------------------------------------


def test_level_2_encodes_a_scan_again_as_a_smaller_jpeg():
    data = searchable_scan()

    smaller = optimized(data, 2)

    streams = images(smaller)
    assert len(streams) == len(scans())
    for stream in streams:
        jpeg = jpeg_of(stream)
        assert jpeg not in {page.jpeg for page in scans()}
        with Image.open(io.BytesIO(jpeg)) as decoded:
            assert decoded.format == "JPEG" and decoded.mode == "L"
    assert len(smaller) < 0.9 * len(optimized(data, 1))


def test_level_2_makes_a_colour_image_that_is_grey_a_grey_jpeg_and_leaves_black_and_white_in_flate():
    pdf = pikepdf.new()
    grey = grey_page()
    size = (grey.width * 72 / SCAN_DPI, grey.height * 72 / SCAN_DPI)
    add_page(pdf, size, {"/Im0": image_stream(pdf, grey.convert("RGB"))}, b"q %f 0 0 %f 0 0 cm /Im0 Do Q" % size)
    # Text in black and white only, in 8-bit grey: its JPEG would be larger than its Flate.
    sharp = bitonal_page().convert("L").crop((100, 100, 900, 900))
    add_page(pdf, (288, 288), {"/Im0": image_stream(pdf, sharp)}, b"q 288 0 0 288 0 0 cm /Im0 Do Q")
    data = saved(pdf)

    smaller = optimized(data, 2)

    with pikepdf.open(io.BytesIO(smaller)) as after:
        scan_image, sharp_image = (page.Resources.XObject.Im0 for page in after.pages)
        assert filters(scan_image)[-1] == "/DCTDecode" and scan_image.ColorSpace == "/DeviceGray"
        assert filters(sharp_image) == ["/FlateDecode"]
    assert_draws_the_same(data, smaller, 2)
    assert len(smaller) < len(data) / 3


def test_level_2_keeps_masks_decode_arrays_stencils_and_icc_spaces_lossless():
    pdf = pikepdf.new()
    grey = grey_page()
    icc = pikepdf.Stream(pdf, zlib.compress(b"\x00" * 64))  # a stand-in: only that it stays referenced is checked
    icc.N = 1
    icc_space = pdf.make_indirect(pikepdf.Array([pikepdf.Name.ICCBased, icc]))
    inverted = grey.point(lambda v: 255 - v)
    # The soft mask's twin, drawn as a picture, made first so that it is the one kept: it stays lossless.
    twin = image_stream(pdf, inverted)
    soft_mask = image_stream(pdf, inverted)
    stencil_bits = grey.point(lambda v: 255 if v > 160 else 0).convert("1")
    painted = {
        "/WithMask": image_stream(pdf, grey.convert("RGB"), SMask=soft_mask),
        "/Decoded": image_stream(pdf, grey, Decode=[1, 0]),
        "/Stencil": image_stream(pdf, stencil_bits, ImageMask=True),
        "/Icc": image_stream(pdf, grey, ColorSpace=icc_space),
        "/Twin": twin,
    }
    size = (grey.width * 72 / SCAN_DPI, grey.height * 72 / SCAN_DPI)
    for name in painted:
        add_page(pdf, size, {name: painted[name]}, b"q %f 0 0 %f 0 0 cm %s Do Q" % (*size, name.encode()))
    data = saved(pdf)
    with pikepdf.open(io.BytesIO(data)) as before:
        samples = {
            "mask": before.pages[0].Resources.XObject.WithMask.SMask.read_bytes(),
            "decoded": before.pages[1].Resources.XObject.Decoded.read_bytes(),
            "stencil": before.pages[2].Resources.XObject.Stencil.read_bytes(),
        }

    smaller = optimized(data, 2)

    with pikepdf.open(io.BytesIO(smaller)) as after:
        with_mask, decoded, stencil, icc_image, twin_kept = (
            page.Resources.XObject[name] for page, name in zip(after.pages, painted, strict=True)
        )
        assert twin_kept.objgen == with_mask.SMask.objgen
        # The masked image may be a JPEG; its soft mask keeps its very samples.
        assert filters(with_mask)[-1] == "/DCTDecode"
        assert filters(with_mask.SMask) == ["/FlateDecode"]
        assert with_mask.SMask.read_bytes() == samples["mask"]
        assert decoded.Decode == [1, 0] and decoded.read_bytes() == samples["decoded"]
        assert bool(stencil.ImageMask) and filters(stencil) == ["/CCITTFaxDecode"]
        assert icc_image.ColorSpace[0] == "/ICCBased" and icc_image.ColorSpace[1].N == 1
        assert filters(icc_image)[-1] == "/DCTDecode"  # an ICC-based grey image may be a JPEG; its space stays
    assert_draws_the_same(data, smaller, 2)


def test_a_damaged_image_is_left_as_it_came_and_the_rest_is_optimized():
    pdf = pikepdf.new()
    grey = grey_page()
    truncated = image_stream(pdf, grey)
    truncated.write(zlib.compress(grey.tobytes())[:5000], filter=pikepdf.Name.FlateDecode)
    not_a_jpeg = image_stream(pdf, grey)
    not_a_jpeg.write(b"\xff\xd8 not a JPEG at all" * 100, filter=pikepdf.Name.DCTDecode)
    odd_width = image_stream(pdf, grey, Width=pikepdf.Name.Wide)
    damaged = {"/Im0": truncated, "/Im1": not_a_jpeg, "/Im2": odd_width, "/Im3": image_stream(pdf, grey)}
    add_page(pdf, (144, 144), damaged, b"q 144 0 0 144 0 0 cm /Im3 Do Q")
    data = saved(pdf)
    with pikepdf.open(io.BytesIO(data)) as before:
        raw = {name: before.pages[0].Resources.XObject[name].read_raw_bytes() for name in ("/Im0", "/Im1", "/Im2")}

    smaller = optimized(data, 2)

    with pikepdf.open(io.BytesIO(smaller)) as after:
        xobjects = after.pages[0].Resources.XObject
        assert {name: xobjects[name].read_raw_bytes() for name in raw} == raw
        assert filters(xobjects.Im3)[-1] == "/DCTDecode"

"""Each page's resolution: a PDF page's from its content, an image's as stated, given or estimated."""

from __future__ import annotations

import io

import pikepdf
import pytest
from PIL import Image

from documents import resolution
from documents.inspection import inspect
from documents.limits import DocumentLimits
from documents.pages import open_document
from documents.resolution import Resolution, estimate_image_dpi, page_resolution, stated_dpi
from tests.scans import scanned_pdf

# -- PDF pages, made with pikepdf: each image and its placement ---------------------------------------


def _image(pdf: pikepdf.Pdf, width: int, height: int) -> pikepdf.Stream:
    stream = pikepdf.Stream(pdf, bytes([255]) * (width * height))
    stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    stream.Width, stream.Height = width, height
    stream.ColorSpace, stream.BitsPerComponent = pikepdf.Name.DeviceGray, 8
    return stream


def page_pdf(
    size: tuple[float, float],
    images: list[tuple[tuple[int, int], str]],
    *,
    text: str | None = None,
    form_matrix: str | None = None,
) -> bytes:
    """One page of ``size`` points: each image (pixels, the ``cm`` placing it), then ``text`` drawn with Tr mode.

    With ``form_matrix``, the images are drawn by a form XObject with that /Matrix.
    """
    pdf = pikepdf.Pdf.new()
    names = {f"/Im{i}": _image(pdf, *pixels) for i, (pixels, _) in enumerate(images)}
    drawing = " ".join(f"q {cm} cm /Im{i} Do Q" for i, (_, cm) in enumerate(images))
    resources = pikepdf.Dictionary(
        XObject=pikepdf.Dictionary(names),
        Font=pikepdf.Dictionary(
            F1=pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
        ),
    )
    if form_matrix is not None:
        form = pikepdf.Stream(pdf, drawing.encode())
        form.Type, form.Subtype = pikepdf.Name.XObject, pikepdf.Name.Form
        form.BBox = [0, 0, *size]
        form.Matrix = [float(v) for v in form_matrix.split()]
        form.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(names))
        resources.XObject = pikepdf.Dictionary(Fm0=form)
        drawing = "/Fm0 Do"
    if text is not None:
        mode, words = text.split(" ", 1)
        drawing += f" BT /F1 12 Tf {mode} Tr 20 20 Td ({words}) Tj ET"
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, *size],
                Resources=resources,
                Contents=pikepdf.Stream(pdf, drawing.encode()),
            )
        )
    )
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


def drawn(data: bytes, limits: DocumentLimits | None = None) -> Image.Image:
    with open_document(data, "application/pdf", limits=limits) as document:
        return document.page(0)


def test_an_image_filling_a_page_is_drawn_so_that_its_pixels_land_one_to_one():
    # 2 x 1.5 inches holding 4800 x 3600 pixels: 2400 dpi.
    page = drawn(page_pdf((144, 108), [((4800, 3600), "144 0 0 108 0 0")]))

    assert page.size == (4800, 3600)
    assert page.info["dpi"] == (2400, 2400)
    assert page.info["dpi_source"] == "content"


def test_the_matrices_of_the_forms_an_image_is_drawn_through_count():
    # The form halves everything it draws: the image covers half the page's width and height, so 400 dpi.
    page = drawn(page_pdf((288, 288), [((800, 800), "288 0 0 288 0 0")], form_matrix="0.5 0 0 0.5 0 0"))

    assert page.info["dpi"] == (400, 400)


def test_an_image_placed_turned_a_quarter_is_measured_along_its_own_sides():
    # 600 x 300 pixels drawn turned: its 600 pixels run up the page's 3 inches.
    page = drawn(page_pdf((144, 216), [((600, 300), "0 216 -144 0 144 0")]))

    assert page.info["dpi"] == (200, 200)


def test_the_densest_image_that_covers_a_real_share_of_the_page_decides_and_a_small_stamp_does_not():
    scan = ((1700, 2200), "612 0 0 792 0 0")  # 200 dpi on Letter
    stamp = ((1200, 1200), "72 0 0 72 500 700")  # 1200 dpi, one inch square: 1.5% of the page
    photo = ((1800, 1200), "306 0 0 204 0 0")  # 424 dpi, 13% of the page

    assert drawn(page_pdf((612, 792), [scan, stamp])).info["dpi"] == (200, 200)
    assert drawn(page_pdf((612, 792), [scan, stamp, photo])).info["dpi"] == (424, 424)


def test_a_page_without_images_is_drawn_at_300_dpi():
    page = drawn(page_pdf((144, 72), [], text="0 born digital"))

    assert page.size == (600, 300)
    assert (page.info["dpi"], page.info["dpi_source"]) == ((300, 300), "vector")


def test_visible_text_lifts_a_coarser_image_to_300_dpi_and_invisible_text_does_not():
    scan = ((400, 200), "144 0 0 72 0 0")  # 200 dpi

    visible = drawn(page_pdf((144, 72), [scan], text="0 a stamped date"))
    invisible = drawn(page_pdf((144, 72), [scan], text="3 an earlier OCR layer"))

    assert (visible.info["dpi"], visible.info["dpi_source"]) == ((300, 300), "vector")
    assert (invisible.info["dpi"], invisible.info["dpi_source"]) == ((200, 200), "content")


def test_a_coarse_image_is_lifted_to_150_dpi():
    fax = drawn(page_pdf((612, 792), [((612, 792), "612 0 0 792 0 0")]))  # 72 dpi

    assert (fax.size, fax.info["dpi"]) == ((1275, 1650), (150, 150))


def test_the_pixel_limit_has_the_last_word_and_the_page_says_what_it_was_drawn_at():
    page = drawn(page_pdf((144, 108), [((4800, 3600), "144 0 0 108 0 0")]), DocumentLimits(max_pixels=1_000_000))

    assert page.width * page.height <= 1_000_000
    assert page.info["dpi"][0] == pytest.approx(page.width / 2, abs=1)
    assert page.info["dpi_source"] == "content"


def test_the_gateway_does_not_refuse_a_page_whose_content_asks_for_more_pixels_than_it_may_have():
    data = page_pdf((144, 108), [((4800, 3600), "144 0 0 108 0 0")])  # 17.3 Mpx at its content's 2400 dpi

    assert inspect(data, "application/pdf", DocumentLimits(max_pixels=1_000_000)) == 1


def test_a_scan_at_200_dpi_is_drawn_at_200_dpi_one_to_one():
    data = scanned_pdf([0])
    with open_document(data, "application/pdf") as document:
        page = document.page(0)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        image = pdf.pages[0].Resources.XObject.Scan
        pixels = (int(image.Width), int(image.Height))

    assert page.info["dpi"] == (200, 200)
    assert page.size == pixels


def test_the_decision_from_what_a_page_holds():
    assert page_resolution(0, False) == Resolution(300, "vector")
    assert page_resolution(0, True) == Resolution(300, "vector")
    assert page_resolution(600, True) == Resolution(600, "content")
    assert page_resolution(200, True) == Resolution(300, "vector")
    assert page_resolution(96, False) == Resolution(150, "content")


# -- images ------------------------------------------------------------------------------------


def encoded(fmt: str, **params) -> Image.Image:
    buffer = io.BytesIO()
    Image.new("L", (60, 40), 255).save(buffer, fmt, **params)
    return Image.open(io.BytesIO(buffer.getvalue()))


def test_what_an_image_states_and_what_it_does_not():
    assert stated_dpi(encoded("PNG", dpi=(300, 300))) == pytest.approx((300, 300), abs=0.01)
    assert stated_dpi(encoded("PNG")) is None
    assert stated_dpi(encoded("JPEG")) is None  # a JFIF header with an aspect ratio only
    assert stated_dpi(encoded("JPEG", dpi=(204, 196))) == (204, 196)
    assert stated_dpi(encoded("TIFF", dpi=(600, 600))) == (600, 600)  # Pillow's IFDRational
    assert stated_dpi(encoded("PNG", dpi=(1, 1))) is None  # no credible resolution


def test_an_image_page_says_what_it_states_and_nothing_else():
    for fmt, params, expected in [("PNG", {"dpi": (300, 300)}, (300, 300)), ("PNG", {}, None), ("JPEG", {}, None)]:
        buffer = io.BytesIO()
        Image.new("L", (60, 40), 255).save(buffer, fmt, **params)
        with open_document(buffer.getvalue(), f"image/{fmt.lower()}") as document:
            page = document.page(0)
        stated = page.info.get("dpi")
        assert (stated and tuple(round(v) for v in stated)) == expected
        assert page.info.get("dpi_source") == ("stated" if expected else None)


def lines_of(height_pt: float, dpi: float, count: int = 20) -> list[float]:
    return [height_pt * dpi / 72] * count


@pytest.mark.parametrize(
    ("sheet", "size"),
    [("Letter", (2550, 3300)), ("A4", (2480, 3508)), ("Legal", (2550, 4200)), ("A5", (1748, 2480))],
)
@pytest.mark.parametrize("text_off_by", [0.85, 1.0, 1.2])
def test_a_scan_of_a_sheet_snaps_to_it_at_its_usual_resolution_though_the_text_is_off(sheet, size, text_off_by):
    width, height = size
    estimate = estimate_image_dpi(width, height, lines_of(resolution.LINE_HEIGHT_POINTS * text_off_by, 300))

    assert estimate == Resolution(300, "estimated")


def test_a4_and_a5_share_an_aspect_and_the_text_tells_them_apart():
    # 1748 x 2480 is A5 at 300 dpi (or A4 at 211); 1654 x 2339 is A4 at 200 dpi (or A5 at 283).
    assert estimate_image_dpi(1748, 2480, lines_of(resolution.LINE_HEIGHT_POINTS, 300)).dpi == 300
    assert estimate_image_dpi(1654, 2339, lines_of(resolution.LINE_HEIGHT_POINTS, 200)).dpi == 200


def test_a_page_of_small_type_still_snaps_to_its_sheet_at_a_usual_resolution():
    # Tesseract on a page of the test PDF that is mostly a listing in small type: a third under the truth.
    for size, true_dpi in [((2550, 3300), 300), ((1700, 2200), 200), ((2480, 3508), 300), ((1654, 2339), 200)]:
        estimate = estimate_image_dpi(*size, lines_of(resolution.LINE_HEIGHT_POINTS * 0.68, true_dpi))
        assert estimate == Resolution(true_dpi, "estimated"), size


def test_a_sheet_at_an_odd_resolution_is_taken_when_no_usual_one_is_near():
    # 2150 x 3041: A4 at 260 dpi (A3 at 184, B4 at 218, B5 at 310, A5 at 367, A6 at 520): none usual.
    estimate = estimate_image_dpi(2150, 3041, lines_of(resolution.LINE_HEIGHT_POINTS, 255))
    assert estimate.dpi == pytest.approx(260, abs=1)


def test_a_scan_of_no_standard_sheet_takes_the_texts_estimate_rounded_to_a_usual_resolution():
    assert estimate_image_dpi(3000, 1000, lines_of(resolution.LINE_HEIGHT_POINTS, 290)) == Resolution(300, "estimated")
    assert estimate_image_dpi(3000, 1000, lines_of(resolution.LINE_HEIGHT_POINTS, 500)).dpi == 500


def test_too_little_text_assumes_300_dpi_and_snaps_to_a_sheet_near_it():
    assert estimate_image_dpi(2480, 3508, lines_of(9, 300, count=2)) == Resolution(300, "assumed")
    assert estimate_image_dpi(1700, 2200, []) == Resolution(200, "assumed")  # Letter at 200 dpi
    assert estimate_image_dpi(1000, 1000, []) == Resolution(300, "assumed")


def test_the_sheets_an_aspect_fits():
    assert {name for name, _ in resolution.sheet_candidates(2550, 3300)} == {"Letter"}
    assert {name for name, _ in resolution.sheet_candidates(3508, 2480)} == {"A3", "A4", "A5", "A6", "B4", "B5"}


# -- the searchable PDF of an image: its page sized from the resolution its result recorded --------------


def _page_inches(image: bytes, result: dict | None) -> tuple[float, float]:
    from documents.searchable_pdf import SourceDocument, searchable_pdf

    pages = {} if result is None else {0: {"page": 1, "text": "", "lines": [], "source": "ocr"} | result}
    data = searchable_pdf([SourceDocument(image, "image/png", pages)])
    with pikepdf.open(io.BytesIO(data)) as pdf:
        box = [float(v) for v in pdf.pages[0].MediaBox]
    return round((box[2] - box[0]) / 72, 2), round((box[3] - box[1]) / 72, 2)


def _png(size: tuple[int, int], **params) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", size, 255).save(buffer, "PNG", **params)
    return buffer.getvalue()


@pytest.mark.parametrize("source", ["estimated", "option", "assumed"])
def test_an_images_page_is_sized_by_the_resolution_its_result_recorded(source):
    assert _page_inches(_png((2550, 3300)), {"dpi": 300, "dpi_source": source}) == (8.5, 11.0)


def test_a_stated_resolution_sizes_the_page_whatever_else_a_result_says():
    stated = _png((2550, 3300), dpi=(150, 150))

    assert _page_inches(stated, {"dpi": 150, "dpi_source": "stated"}) == (17.0, 22.0)
    assert _page_inches(stated, None) == (17.0, 22.0)


def test_a_page_of_forms_drawing_forms_is_measured_from_what_a_bounded_walk_sees(monkeypatch):
    monkeypatch.setattr(resolution, "_MAX_OBJECTS", 3)
    # Four images; the walk stops after three objects, the 300-dpi image among them.
    images = [((600, 300), "144 0 0 72 0 0"), ((300, 150), "144 0 0 72 0 0"), ((150, 75), "144 0 0 72 0 0")]
    page = drawn(page_pdf((144, 72), [*images, ((1200, 600), "144 0 0 72 0 0")]))

    assert (page.info["dpi"], page.info["dpi_source"]) == ((300, 300), "content")


@pytest.mark.parametrize(("line_px", "dpi"), [(2.0, 50), (4000.0, 4800)])
def test_an_estimate_from_absurd_lines_stays_within_what_image_dpi_may_say(line_px, dpi):
    # A long strip fits no sheet, so its lines alone would say 15 or 30,000 dpi.
    assert estimate_image_dpi(5000, 300, [line_px] * 5) == Resolution(dpi, resolution.ESTIMATED)

"""Page and pixel limits: the worst documents are refused from their headers, before anything is decoded.

Each bomb here would take gigabytes to decode; the tests run under an
address-space limit of their own (a forked child, see ``bounded``), so
one that got decoded would fail the test instead of the machine.
"""

from __future__ import annotations

import resource
from collections.abc import Callable

import pytest

from documents.inspection import Inspector, inspect
from documents.isolation import OutOfTime, run_isolated
from documents.limits import (
    DocumentLimits,
    TooManyPages,
    TooManyPixels,
    check_pixels,
    pdf_render_scale,
)
from documents.pages import open_document
from jobs.errors import InvalidDocument
from tests import bad_documents as bad

LIMITS = DocumentLimits(max_pages=1000, max_pixels=50_000_000)
#: What reading a bomb's header may cost: far below what decoding any of them would.
BOUND_BYTES = 1 << 30


def bounded(function, *args):
    """``function(*args)`` in a child process whose address space is ``BOUND_BYTES`` more than now."""

    def limited():
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        size = pages * resource.getpagesize() + BOUND_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
        return function(*args)

    return run_isolated(limited)


#: name -> (make the document, its media type, the refusal expected)
BOMBS: dict[str, tuple[Callable[[], bytes], str, type[Exception]]] = {
    "png 100k x 100k": (bad.png_bomb, "image/png", TooManyPixels),
    "jpeg 65535 x 65535": (bad.jpeg_bomb, "image/jpeg", TooManyPixels),
    "tiff 100k x 100k": (lambda: bad.tiff([(100_000, 100_000)]), "image/tiff", TooManyPixels),
    "tiff with a bomb on page 3": (lambda: bad.tiff([(10, 10), (10, 1), (100_000, 1000)]), "image/tiff", TooManyPixels),
    "tiff of 5000 pages": (lambda: bad.tiff_pages(5000), "image/tiff", TooManyPages),
    "pdf page of 200 x 200 inches": (bad.pdf_huge_page, "application/pdf", TooManyPixels),
    "pdf of 20000 pages": (lambda: bad.pdf_pages(20_000), "application/pdf", TooManyPages),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_inspection_refuses_each_bomb_from_its_headers(name):
    make, media_type, refusal = BOMBS[name]

    with pytest.raises(refusal):
        bounded(inspect, make(), media_type, LIMITS)


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_worker_opening_a_bomb_refuses_it_before_decoding_a_page(name):
    make, media_type, refusal = BOMBS[name]

    def open_and_draw_every_page(data):
        with open_document(data, media_type, limits=LIMITS) as document:
            for index in range(document.page_count):
                document.page(index)

    with pytest.raises(refusal):
        bounded(open_and_draw_every_page, make())


def test_a_pdf_whose_page_tree_inflates_to_a_gigabyte_is_refused_by_the_bound_on_opening_it():
    # PDFium would take 2 GB and 40 s of CPU to count this 3 KB file's one page.
    with pytest.raises(InvalidDocument, match=r"opening the PDF ended the process reading it \(SIGABRT\)"):
        inspect(bad.pdf_object_stream_bomb(), "application/pdf", LIMITS)
    # The same structure, inflating to a megabyte, opens: it is the size that is refused.
    assert inspect(bad.pdf_object_stream_bomb(1 << 20), "application/pdf", LIMITS) == 1


def test_a_pdf_whose_cross_reference_stream_inflates_to_200_mb_is_refused_by_the_bound_on_opening_it():
    # Under a kilobyte, deflated twice: 200 MB inflated and held twice is past INSPECTION_MEMORY_BYTES.
    bomb = bad.pdf_xref_stream_bomb()
    assert len(bomb) < 1024

    with pytest.raises(InvalidDocument, match=r"opening the PDF ended the process reading it \(SIGABRT\)"):
        inspect(bomb, "application/pdf", LIMITS)
    # The same structure, inflating to 40 MB (80 held), opens within the bound.
    assert inspect(bad.pdf_xref_stream_bomb(40 << 20), "application/pdf", LIMITS) == 1


def test_an_inspector_opens_many_pdfs_in_one_process_each_within_its_own_bounds():
    documents = [bad.real_pdf(2), bad.pdf_xref_stream_bomb(40 << 20), bad.pdf_pages(1000), bad.real_pdf(3)]

    with Inspector() as inspector:
        # Each PDF's memory bound counts from what the process holds when it begins, so many fit in one.
        assert [inspector.inspect(data, "application/pdf", LIMITS, seconds=60) for data in documents * 3] == [
            2, 1, 1000, 3,
        ] * 3  # fmt: skip
        assert inspector.forks == 1
        with pytest.raises(InvalidDocument, match="ended the process"):
            inspector.inspect(bad.pdf_xref_stream_bomb(), "application/pdf", LIMITS, seconds=60)
        with pytest.raises(TooManyPages):
            inspector.inspect(bad.pdf_pages(1001), "application/pdf", LIMITS, seconds=60)
        assert inspector.inspect(bad.real_png(), "image/png", LIMITS, seconds=60) == 1  # read here, no child
        assert inspector.forks == 2  # the bomb's child died; one more for the PDF after it


def test_an_inspector_kills_a_pdf_that_takes_longer_than_it_is_given():
    with Inspector() as inspector, pytest.raises(OutOfTime):
        # About a second to open (a cross-reference table rebuilt from 8 MB), given a hundredth of one.
        inspector.inspect(bad.pdf_without_xref(8 << 20), "application/pdf", LIMITS, seconds=0.01)


def test_the_refusals_say_what_was_found_and_what_is_allowed():
    with pytest.raises(TooManyPixels) as pixels:
        inspect(bad.png_bomb(), "image/png", LIMITS)
    with pytest.raises(TooManyPages) as pdf_pages:
        inspect(bad.pdf_pages(1001), "application/pdf", LIMITS)
    with pytest.raises(TooManyPages) as tiff_pages:
        inspect(bad.tiff_pages(5000), "image/tiff", LIMITS)

    assert (pixels.value.page, pixels.value.width, pixels.value.height) == (1, 100_000, 100_000)
    assert str(pixels.value) == "page 1 is 100000x100000 pixels, over the limit of 50000000 pixels a page"
    assert (pdf_pages.value.page_count, pdf_pages.value.max_pages) == (1001, 1000)
    # A page flood is not counted to its end: that would be the cost the limit saves.
    assert tiff_pages.value.page_count is None
    assert "more than 1000 pages" in str(tiff_pages.value)


def test_documents_within_the_limits_pass_with_their_page_count():
    assert inspect(bad.real_png(), "image/png", LIMITS) == 1
    assert inspect(bad.real_jpeg(), "image/jpeg", LIMITS) == 1
    assert inspect(bad.real_tiff(3), "image/tiff", LIMITS) == 3
    assert inspect(bad.pdf_pages(1000), "application/pdf", LIMITS) == 1000
    assert inspect(b"one\ftwo\fthree", "text/plain", LIMITS) == 3


def test_a_text_counts_its_pages_by_form_feeds():
    with pytest.raises(TooManyPages):
        inspect(b"\f" * 1000, "text/plain", LIMITS)


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (bad.truncated(bad.real_pdf(3)), "application/pdf"),
        (b"%PDF-1.7\n" + b"\0" * 100, "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"II*\x00\xff\xff\xff\x7f", "image/tiff"),
    ],
    ids=["pdf cut in half", "pdf without objects", "png without header", "tiff pointing nowhere"],
)
def test_headers_that_cannot_be_read_are_invalid(data, media_type):
    with pytest.raises(InvalidDocument):
        inspect(data, media_type, LIMITS)


def test_a_pdf_page_too_big_for_the_render_dpi_is_drawn_smaller_down_to_72_dpi():
    a0 = (33.1 * 72, 46.8 * 72)  # points
    scale = pdf_render_scale(1, *a0, 200, LIMITS)

    assert 72 / 72 < scale < 200 / 72
    assert round(a0[0] * scale) * round(a0[1] * scale) <= LIMITS.max_pixels
    assert pdf_render_scale(1, 612, 792, 200, LIMITS) == 200 / 72  # a letter page: as asked


def test_a_pdf_page_too_big_even_at_72_dpi_is_refused():
    side = 100 * 72  # 100 inches: 7200 x 7200 = 51.8 Mpx at 72 dpi

    with pytest.raises(TooManyPixels, match="even at 72 dpi"):
        pdf_render_scale(3, side, side, 200, LIMITS)


@pytest.mark.parametrize("size", [(0, 792), (612, -1), (float("inf"), 10), (float("nan"), 10)])
def test_a_pdf_page_without_area_is_invalid(size: tuple[float, float]):
    with pytest.raises(InvalidDocument, match="no area"):
        pdf_render_scale(1, *size, 200, LIMITS)


def test_an_empty_image_is_invalid():
    with pytest.raises(InvalidDocument, match="empty"):
        check_pixels(1, 0, 10, LIMITS)


def test_the_limits_default_to_the_configured_ones():
    assert DocumentLimits() == DocumentLimits(max_pages=10_000, max_pixels=50_000_000)

"""A page's geometry on real scans (tests/scans.py): which way up it stands, and how crooked it is.

OSD is tested here through ``orientation`` and ``upright_rotation``; the classifier that decides
first in tests/unit/documents/test_orientation.py.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops

from documents import geometry
from documents.geometry import correct, measure_skew, straighten, turn_upright, upright_rotation
from tests.scans import SCAN_DPI, scanned_pages

#: Three text pages of the source, of different layouts.
PAGES = (0, 5, 9)


def scan(index: int, *, turned: int = 0, skewed: float = 0.0) -> Image.Image:
    (page,) = scanned_pages([index], turned={index: turned}, skewed={index: skewed})
    return Image.open(io.BytesIO(page.jpeg))


def blank_scan() -> Image.Image:
    """A blank sheet as a scanner stores it: white, with JPEG's noise."""
    buffer = io.BytesIO()
    Image.new("L", (8 * SCAN_DPI // 2, 11 * SCAN_DPI), 255).save(buffer, "JPEG", quality=80)
    return Image.open(io.BytesIO(buffer.getvalue()))


@pytest.mark.parametrize("index", PAGES)
def test_every_turn_of_a_page_is_found_and_undone(index):
    upright = scan(index)
    for turned in (0, 90, 180, 270):
        sheet = upright.rotate(-turned, expand=True)  # fed turned clockwise

        rotation = upright_rotation(sheet)

        assert rotation == (360 - turned) % 360, turned
        assert turn_upright(sheet, rotation).size == upright.size


@pytest.mark.parametrize("index", PAGES)
@pytest.mark.parametrize("skewed", [-7.83, -4.37, -1.13, 1.27, 2.71, 7.96])
def test_a_crooked_page_s_skew_is_measured_within_a_fraction_of_a_degree(index, skewed):
    # Fed crooked by ``skewed`` counter-clockwise: straightening turns it back as far.
    assert measure_skew(scan(index, skewed=skewed)) == pytest.approx(-skewed, abs=0.3)


@pytest.mark.parametrize("index", PAGES)
def test_a_straight_page_is_left_straight(index):
    assert measure_skew(scan(index)) == 0.0


def test_a_blank_page_is_left_as_it_is():
    blank = blank_scan()

    assert geometry.orientation(blank) == geometry.Orientation(0, 0.0)  # OSD: too few characters
    page = correct(blank, rotate_pages=True, deskew=True)
    assert (page.rotation, page.skew, page.orientation_by) == (0, 0.0, "osd")  # the classifier: too few glyphs
    assert page.image is blank


def test_a_turn_below_the_threshold_is_not_applied():
    sheet = scan(0, turned=90)
    confidence = geometry.orientation(sheet).confidence

    assert upright_rotation(sheet, threshold=confidence + 1) == 0
    assert upright_rotation(sheet, threshold=confidence) == 270


def test_a_turned_and_crooked_page_is_stood_up_then_straightened_keeping_the_upright_size():
    upright = scan(5)

    page = correct(scan(5, turned=270, skewed=-3.4), rotate_pages=True, deskew=True)

    assert (page.rotation, page.orientation_by) == (90, "classifier")
    assert page.skew == pytest.approx(3.4, abs=0.3)
    assert page.image.size == upright.size


def test_nothing_is_done_unless_asked():
    sheet = scan(0, turned=90, skewed=2.0)

    page = correct(sheet, rotate_pages=False, deskew=False)

    assert (page.image, page.rotation, page.skew) == (sheet, 0, 0.0)


def test_straightening_keeps_the_canvas_and_fills_the_corners_white():
    page = Image.new("RGB", (400, 300), "black")

    turned = straighten(page, 5.0)

    assert turned.size == page.size
    assert turned.getpixel((0, 0)) == (255, 255, 255)
    assert turned.getpixel((200, 150)) == (0, 0, 0)
    assert straighten(page, 0.0) is page
    assert not ImageChops.difference(straighten(page.convert("L"), 5.0).convert("RGB"), turned).getbbox()


def test_a_large_page_is_reduced_for_osd_and_still_stood_up():
    sheet = scan(5, turned=180)
    large = sheet.resize((sheet.width * 2, sheet.height * 2), Image.Resampling.BICUBIC)  # a 400-dpi scan

    assert upright_rotation(large) == 180

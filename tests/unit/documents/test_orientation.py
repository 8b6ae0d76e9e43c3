"""The learned page-orientation classifier on real pages: every turn named, a bare page left unsure, one model."""

from __future__ import annotations

import io
import threading

import numpy as np
import onnxruntime
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw

from documents import geometry, orientation
from documents.orientation import CONFIDENT, UNSURE, LoadedOnce, classify
from tests.scans import POINTS_PER_INCH, SCAN_DPI, real_pdf, scanned_pages

#: Pages of the real PDF of different layouts: the title page, text with headings, lists, a table.
PAGES = (0, 3, 5, 9, 14)
TURNS = (0, 90, 180, 270)


def rendered(index: int, dpi: int) -> Image.Image:
    """Page ``index`` of the real PDF drawn at ``dpi``, in grey."""
    document = pdfium.PdfDocument(real_pdf())
    try:
        return document[index].render(scale=dpi / POINTS_PER_INCH, grayscale=True).to_pil().convert("L")
    finally:
        document.close()


def fed_turned(upright: Image.Image, turned: int) -> Image.Image:
    return upright.rotate(-turned, expand=True)  # PIL turns counter-clockwise


def blank_scan() -> Image.Image:
    """A blank sheet as a scanner stores it: paper grey with noise, through JPEG."""
    noise = np.random.default_rng(31).normal(244, 5, (11 * SCAN_DPI, 8 * SCAN_DPI + SCAN_DPI // 2))
    buffer = io.BytesIO()
    Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8)).save(buffer, "JPEG", quality=80)
    return Image.open(io.BytesIO(buffer.getvalue()))


def assert_named_right(upright: Image.Image, what: object) -> None:
    for turned in TURNS:
        found = classify(fed_turned(upright, turned))

        assert found.rotation == (360 - turned) % 360, (what, turned, found)
        assert found.confidence >= CONFIDENT, (what, turned, found)


@pytest.mark.parametrize("dpi", [150, 300])
@pytest.mark.parametrize("index", PAGES)
def test_every_turn_of_a_drawn_page_is_named_at_any_resolution(index, dpi):
    assert_named_right(rendered(index, dpi), (index, dpi))


@pytest.mark.parametrize("index", PAGES)
def test_every_turn_of_a_crooked_jpeg_scan_is_named(index):
    (page,) = scanned_pages([index], skewed={index: 3.5 if index % 2 else -2.5})

    assert_named_right(Image.open(io.BytesIO(page.jpeg)), index)


@pytest.mark.parametrize("mode", ["1", "P", "RGB", "RGBA", "CMYK", "I"])
def test_a_page_in_any_mode_is_named(mode):
    (page,) = scanned_pages([9], turned={9: 270})

    found = classify(Image.open(io.BytesIO(page.jpeg)).convert(mode))

    assert (found.rotation, found.confidence >= CONFIDENT) == (90, True)


def test_a_small_page_of_a_high_resolution_image_is_named():
    # A 2 x 1.5 inch piece of a page at 2400 dpi: the glyphs are large in pixels, the page small in inches.
    page = rendered(5, 2400)
    piece = page.crop((2400, 6000, 2400 + 2 * 2400, 6000 + 3 * 2400 // 2))

    assert_named_right(piece, "2400 dpi")


def test_a_page_with_too_few_glyphs_to_tell_is_unsure():
    blank = blank_scan()
    figure = Image.new("L", blank.size, 255)
    drawing = ImageDraw.Draw(figure)
    for k in range(12):
        drawing.ellipse((200 + 40 * k, 300 + 30 * k, 1500 - 20 * k, 1400 - 35 * k), outline=0, width=4)

    for bare in (blank, figure, Image.new("RGB", (40, 30), "white")):
        for turned in TURNS:
            assert classify(fed_turned(bare, turned)) == UNSURE


def test_by_default_the_classifier_decides_and_osd_is_not_run(monkeypatch):
    def no_osd(*args, **kwargs):
        raise AssertionError("OSD ran")

    monkeypatch.setattr(geometry, "orientation", no_osd)
    (page,) = scanned_pages([9], turned={9: 90})

    found = geometry.correct(Image.open(io.BytesIO(page.jpeg)), rotate_pages=True, deskew=False)

    assert (found.rotation, found.orientation_by) == (270, "classifier")


def test_a_page_the_classifier_is_unsure_of_goes_to_osd_which_leaves_a_blank_page_as_it_is():
    blank = blank_scan()

    found = geometry.correct(blank, rotate_pages=True, deskew=False)

    assert (found.rotation, found.orientation_by) == (0, "osd")
    assert found.image is blank


def test_orientation_osd_asks_osd_and_never_the_classifier(monkeypatch):
    def no_classifier(image):
        raise AssertionError("the classifier ran")

    monkeypatch.setattr(orientation, "classify", no_classifier)
    (page,) = scanned_pages([5], turned={5: 180})

    found = geometry.correct(
        Image.open(io.BytesIO(page.jpeg)), rotate_pages=True, deskew=False, orientation_method="osd"
    )

    assert (found.rotation, found.orientation_by) == (180, "osd")


def test_nothing_decides_unless_rotate_pages_is_asked():
    (page,) = scanned_pages([5], turned={5: 90})

    found = geometry.correct(Image.open(io.BytesIO(page.jpeg)), rotate_pages=False, deskew=True)

    assert (found.rotation, found.orientation_by) == (0, None)


def test_the_model_is_loaded_once_however_many_pages_and_threads(monkeypatch):
    sessions = []

    class CountedSession(onnxruntime.InferenceSession):
        def __init__(self, *args, **kwargs):
            sessions.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", CountedSession)
    monkeypatch.setattr(orientation, "classifier", LoadedOnce(orientation._load))
    # Decoded before the threads share them: a PIL image decodes lazily, and not thread-safely.
    pages = [Image.open(io.BytesIO(page.jpeg)).copy() for page in scanned_pages([3, 5, 9], turned={5: 90, 9: 180})]
    found: list[int] = []

    def classify_all() -> None:
        found.extend(classify(page).rotation for page in pages)

    threads = [threading.Thread(target=classify_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(sessions) == 1
    assert sorted(found) == sorted([0, 270, 180] * 4)
    assert orientation.classifier() is orientation.classifier()
    assert sessions[0].get_session_options().intra_op_num_threads == 1


def test_a_loaded_once_thing_is_made_once_when_threads_ask_at_the_same_time():
    made = []
    start = threading.Barrier(8)

    def make() -> object:
        made.append(object())
        return made[-1]

    once = LoadedOnce(make)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(once())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(made) == 1
    assert got == made * 8

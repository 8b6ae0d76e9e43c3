"""A page's geometry: which way up it stands, and how crooked it is.

OCRmyPDF's ``--rotate-pages`` and ``--deskew``, on a page image.

Orientation is named first by a learned page-orientation classifier
(``documents.orientation``, in this process), whose turn is applied when
its class probability reaches ``orientation.CONFIDENT``.  Where it is less
sure (a page with few words, a figure, a blank page), and on every page when
a job asks for ``orientation: "osd"``, Tesseract's orientation and script
detection (OSD, the ``osd`` traineddata) decides, trusted as OCRmyPDF trusts
it: a quarter turn is only applied when OSD's confidence reaches a threshold
(OCRmyPDF's ``--rotate-pages-threshold``, 14 by default).  ``correct`` says
which of the two decided.  OSD costs a ``tesseract`` process that loads its
models again, 0.7 to 1.0 s a 200-dpi page; the classifier tens of
milliseconds.

OSD reads the page as drawn, up to 3000 pixels a side (a letter page at 270
dpi; a larger page is reduced by a whole factor): on a 200-dpi scan halved to
100 dpi its confidence falls from about 30 to under 14 on ordinary text
pages, so reducing further would lose the turns.  A page OSD cannot read
(too few characters: a blank page) is left as it is; so is one whose OSD
fails otherwise: the page is still recognised.

Skew is found with a projection profile (OpenCV): the ink of a downscaled,
binarised page is turned through candidate angles and the angle whose row
sums change most sharply from row to row (text lines lying flat) wins, first
in half degrees over ±10° on the page reduced to 500 pixels, then in
twentieths of a degree around the best on the page reduced to 800 pixels.
On 200-dpi scans of tests/scans.py skewed by 1 to 8 degrees it lands within
0.05° in 15 to 30 ms a page.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import cv2
import numpy as np
import pytesseract
from PIL import Image

from documents import orientation as classifier
from documents.orientation import Orientation
from jobs.errors import EngineUnavailable
from jobs.registry import DEFAULT_ORIENTATION, DEFAULT_ROTATE_PAGES_THRESHOLD, ORIENTATION_DECIDERS

log = logging.getLogger(__name__)

#: The largest skew looked for, either way, in degrees.
MAX_SKEW = 10.0
#: A skew smaller than this is not worth resampling the page for.
MIN_SKEW = 0.1
#: The longer side the page is reduced to for the coarse search (half degrees) and the fine one (twentieths).
_COARSE_SIDE, _FINE_SIDE = 500, 800
_COARSE_STEP, _FINE_STEP = 0.5, 0.05
#: OSD reads a page reduced to this longer side at most (a letter page at 270 dpi): as sure as at full size, sooner.
_OSD_MAX_SIDE = 3000
#: A page with less ink than this share of its pixels has no lines to measure.
_MIN_INK = 0.001
#: The best angle must sharpen the profile by this share over 0°, or the page is taken as straight.
_MIN_GAIN = 0.02


#: Who decided which way up a page stands (``Geometry.orientation_by``).
CLASSIFIER, OSD = ORIENTATION_DECIDERS


def orientation(image: Image.Image, timeout: float = 0) -> Orientation:
    """What Tesseract's OSD says of ``image``; ``Orientation(0, 0.0)`` when it cannot tell.

    ``timeout`` bounds the tesseract run in seconds (0: no bound); running out
    of it counts as OSD not telling.
    """
    grey = image.convert("L")
    factor = -(-max(grey.size) // _OSD_MAX_SIDE)  # rounded up
    if factor > 1:
        grey = grey.reduce(factor)
    try:
        osd = pytesseract.image_to_osd(grey, config="--psm 0", output_type=pytesseract.Output.DICT, timeout=timeout)
    except pytesseract.TesseractNotFoundError:
        raise EngineUnavailable("turning pages upright needs the tesseract binary on this worker") from None
    except (pytesseract.TesseractError, RuntimeError) as exc:
        # "Too few characters" (a blank or nearly blank page), a timeout, an odd image: leave the page be.
        log.info("orientation detection gave up on a page: %s", getattr(exc, "message", None) or exc)
        return Orientation(0, 0.0)
    # OSD's "Rotate" is the clockwise turn that stands the page upright.
    return Orientation(int(osd.get("rotate", 0)) % 360, float(osd.get("orientation_conf", 0.0)))


def upright_rotation(image: Image.Image, threshold: float = DEFAULT_ROTATE_PAGES_THRESHOLD, timeout: float = 0) -> int:
    """Degrees clockwise to turn ``image`` to stand upright, 0 unless OSD is at least ``threshold`` confident."""
    found = orientation(image, timeout)
    return found.rotation if found.confidence >= threshold else 0


def upright(
    image: Image.Image,
    method: str = DEFAULT_ORIENTATION,
    threshold: float = DEFAULT_ROTATE_PAGES_THRESHOLD,
    timeout: float = 0,
) -> tuple[int, str]:
    """Degrees clockwise to turn ``image`` to stand upright, and who decided (``CLASSIFIER`` or ``OSD``).

    ``method`` "auto": the classifier when it is sure, else OSD; "osd": OSD.
    ``threshold`` and ``timeout`` are OSD's (see ``upright_rotation``).
    """
    if method == "auto":
        found = classifier.classify(image)
        if found.confidence >= classifier.CONFIDENT:
            return found.rotation, CLASSIFIER
    return upright_rotation(image, threshold, timeout), OSD


def turn_upright(image: Image.Image, rotation: int) -> Image.Image:
    """``image`` turned ``rotation`` degrees clockwise (a lossless transpose)."""
    return image.rotate(-rotation, expand=True) if rotation else image


def measure_skew(image: Image.Image) -> float:
    """Degrees counter-clockwise to turn ``image`` about its centre to straighten it; 0.0 below ``MIN_SKEW``.

    Within ±``MAX_SKEW``; 0.0 for a page with too little ink to tell.
    """
    fine_grey = _reduced(image, _FINE_SIDE)
    coarse_ink, fine_ink = _ink(_reduced_array(fine_grey, _COARSE_SIDE)), _ink(fine_grey)
    if coarse_ink is None or fine_ink is None:
        return 0.0
    coarse = max(np.arange(-MAX_SKEW, MAX_SKEW + _COARSE_STEP / 2, _COARSE_STEP), key=_profile_sharpness(coarse_ink))
    # The best half degree is within a quarter degree of the true angle: look a little wider than that.
    span = 0.6 * _COARSE_STEP
    score = _profile_sharpness(fine_ink)
    fine = np.clip(np.arange(coarse - span, coarse + span + _FINE_STEP / 2, _FINE_STEP), -MAX_SKEW, MAX_SKEW)
    best = float(max(fine, key=score))
    if abs(best) < MIN_SKEW or score(best) < score(0.0) * (1 + _MIN_GAIN):
        return 0.0
    return round(best, 2)


def straighten(image: Image.Image, skew: float) -> Image.Image:
    """``image`` turned ``skew`` degrees counter-clockwise about its centre, same size, the corners filled white."""
    if not skew:
        return image
    white = 255 if image.mode == "L" else (255,) * len(image.getbands())
    return image.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=white)


@dataclass(frozen=True)
class Geometry:
    image: Image.Image  # the page upright and straightened: what the engine reads
    rotation: int
    skew: float
    orientation_by: str | None = None  # CLASSIFIER or OSD when rotate_pages was asked, else None


def correct(
    image: Image.Image,
    *,
    rotate_pages: bool,
    deskew: bool,
    threshold: float = DEFAULT_ROTATE_PAGES_THRESHOLD,
    deadline: float | None = None,
    orientation_method: str = DEFAULT_ORIENTATION,
) -> Geometry:
    """``image`` turned upright (``rotate_pages``, found by ``orientation_method``: see ``upright``), then straightened
    (``deskew``), and what was done.

    ``deadline`` bounds OSD's run; the classifier's work is bounded by its few crops, tens of milliseconds.
    """
    rotation, decided_by = 0, None
    if rotate_pages:
        timeout = 0.0 if deadline is None else max(deadline - time.monotonic(), 0.001)
        rotation, decided_by = upright(image, orientation_method, threshold, timeout)
        image = turn_upright(image, rotation)
    skew = measure_skew(image) if deskew else 0.0
    return Geometry(straighten(image, skew), rotation, skew, decided_by)


def _reduced(image: Image.Image, side: int) -> np.ndarray:
    """``image`` in grey, its longer side reduced to ``side`` pixels at most."""
    grey = image.convert("L")
    factor = max(grey.size) // side
    if factor > 1:
        grey = grey.reduce(factor)  # a box filter over whole blocks: cheap, and fewer pixels to copy out of PIL
    return _reduced_array(np.asarray(grey), side)


def _reduced_array(grey: np.ndarray, side: int) -> np.ndarray:
    scale = side / max(grey.shape)
    if scale < 1:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return grey


def _ink(grey: np.ndarray) -> np.ndarray | None:
    """The dark pixels (255) of a grey page, or None when there are too few."""
    _, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    if cv2.countNonZero(ink) < _MIN_INK * ink.size:
        return None
    return ink


def _profile_sharpness(ink: np.ndarray):
    """A function of an angle: how sharply the row sums of ``ink`` turned by it change (flat lines: sharp)."""
    height, width = ink.shape
    centre = (width / 2, height / 2)
    cache: dict[float, float] = {}

    def score(angle: float) -> float:
        key = round(float(angle), 3)
        if key not in cache:
            matrix = cv2.getRotationMatrix2D(centre, key, 1.0)
            turned = cv2.warpAffine(ink, matrix, (width, height), flags=cv2.INTER_NEAREST, borderValue=0)
            rows = cv2.reduce(turned, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32F).ravel()
            steps = np.diff(rows)
            cache[key] = float(np.dot(steps, steps))
        return cache[key]

    return score

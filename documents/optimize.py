"""A smaller searchable PDF: OCRmyPDF's ``--optimize`` levels, applied to the PDF before it is saved.

Level 0 is the default and changes nothing: every image keeps its bytes.

Level 1 is lossless: every page draws exactly the pixels it drew before.  A
stream that is Flate-compressed or not compressed at all is compressed
again at zlib's best level, and kept so only where that is smaller; an
8-bit grey or RGB image among them may take the PNG predictors instead
(its rows filtered before compression, as a PNG's are), where zlib's
fastest level finds them smaller than its rows as they are.  A bitonal
image (one component of 1 bit: a black-and-white scan, a stencil mask) is
stored in CCITT Group 4, the code fax machines and scanners use, where that
is smaller than Flate (a dithered picture may not be).  A JPEG is never
encoded again: it may only be wrapped in Flate, which gives its own bytes
back (as OCRmyPDF does at its level 1).  Images whose stored bytes and
dictionaries are the same, once re-encoded, are stored once, every
reference pointed at the one kept.

Level 2 may lose what the eye does not miss.  An 8-bit grey or colour image
(a JPEG or a lossless one) is encoded as a JPEG at ``JPEG_QUALITY``, its
coefficients then coded again by MozJPEG's lossless pass (progressive
scans, Huffman tables made for them: a fifth smaller than libjpeg's
standard coding, the same pixels), where that is smaller than the smallest
lossless form; a colour image whose pixels are all grey within
``GREY_SPREAD`` levels is made grey first.

The recognised text is never touched: its content streams are only
compressed again, losslessly, and no page's content changes.  What must keep
its meaning keeps its samples exactly, at every level: an image used as a
soft mask or a mask, a stencil mask (``/ImageMask``), an image with a
``/Decode`` array or a colour-key mask, one in an indexed, CMYK, Lab,
separation or DeviceN colour space, one of 16 bits, and an image whose soft
mask has a ``/Matte`` (its colours are premultiplied) are only ever stored
losslessly.  An image in an ICC-based colour space keeps it, and is never
made grey (only a plain ``/DeviceRGB`` image is).  Images in JPEG 2000,
JBIG2 and CCITT, inline images in content streams, and streams in filters
other than Flate are left as they are, and so is the XMP metadata stream
(PDF/A wants it readable as it is).  An image or stream that cannot be
decoded, is truncated, or would inflate past ``MAX_INFLATED_BYTES`` (a zip
bomb) is left as it came.  Images are found wherever they are drawn from:
pages, form XObjects, annotations' appearances, patterns.
"""

from __future__ import annotations

import hashlib
import io
import logging
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import mozjpeg_lossless_optimization
import pikepdf
from PIL import Image, ImageChops

from documents.limits import configured

log = logging.getLogger(__name__)

#: The levels, as OCRmyPDF numbers them: 0 as it came, 1 lossless, 2 lossy for grey and colour images.
LEVELS = (0, 1, 2)
#: The JPEG quality of level 2, OCRmyPDF's ``--jpeg-quality`` default for its levels 2 and 3.
JPEG_QUALITY = 75
#: zlib's best compression: a PDF is written once and read many times.
FLATE_LEVEL = 9
#: A colour image is grey if no pixel's channels are further apart than this, of 255 (a JPEG's colour noise).
GREY_SPREAD = 16
#: A stream that inflates to more than this is left compressed as it came.
MAX_INFLATED_BYTES = 256 * 1024 * 1024
_INFLATE_PIECE = 16 * 1024 * 1024
# A JPEG under this share of the image's Flate at zlib's fastest level beats its Flate at the best level too
# (which takes at most a tenth or so off the fastest), so that is not worked out.
_JPEG_SURELY_SMALLER = 0.75
_TIFF_PHOTOMETRIC, _TIFF_ROWS_PER_STRIP, _TIFF_STRIP_OFFSETS, _TIFF_STRIP_BYTE_COUNTS = 262, 278, 273, 279
_GREY_SPACES = frozenset({"/DeviceGray", "/CalGray"})
_RGB_SPACES = frozenset({"/DeviceRGB", "/CalRGB"})
_COMPONENTS = {"/DeviceGray": 1, "/CalGray": 1, "/DeviceRGB": 3, "/CalRGB": 3, "/Lab": 3, "/DeviceCMYK": 4}
_PIL_MODES = {1: "L", 3: "RGB"}
# What decoding a damaged or unusual image can raise; the image is then left as it was.
_IMAGE_ERRORS = (
    pikepdf.PdfError,
    zlib.error,
    OSError,
    ValueError,
    TypeError,
    KeyError,
    SyntaxError,
    struct.error,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
    MemoryError,
)


def optimize(pdf: pikepdf.Pdf, level: int) -> None:
    """Make ``pdf``'s images and streams smaller, as level ``level`` allows (see the module's docstring)."""
    if level not in LEVELS:
        raise ValueError(f"an optimization level is one of {LEVELS}, not {level!r}")
    if level == 0:
        return
    images = [stream for stream in _streams(pdf) if stream.get("/Subtype") == pikepdf.Name.Image]
    # Identical images first, so that each is encoded once; then again, as
    # the same pixels stored two ways now have the same bytes.
    images = _store_once(pdf, images)
    masks = _masks(images)  # after: an image kept for a mask's twin is a mask
    max_pixels = configured().max_pixels
    for image in images:
        try:
            _optimize_image(image, level, image.objgen in masks, max_pixels)
        except _IMAGE_ERRORS as error:
            log.info("an image was left as it was: %s", error)
    _store_once(pdf, images)
    for stream in _streams(pdf):
        if stream.get("/Subtype") != pikepdf.Name.Image and stream.get("/Type") != pikepdf.Name.Metadata:
            try:
                _recompress(stream)
            except _IMAGE_ERRORS as error:
                log.info("a stream was left as it was: %s", error)


def _streams(pdf: pikepdf.Pdf) -> Iterator[pikepdf.Stream]:
    for obj in pdf.objects:
        if isinstance(obj, pikepdf.Stream):
            yield obj


def _masks(images: list[pikepdf.Stream]) -> set[tuple[int, int]]:
    """The images that are another's soft mask or mask: their samples are alpha or stencil bits."""
    masks = set()
    for image in images:
        for key in ("/SMask", "/Mask"):
            target = image.get(key)
            if isinstance(target, pikepdf.Stream):
                masks.add(target.objgen)
    return masks


# --- stored once ------------------------------------------------------------------------------


def _store_once(pdf: pikepdf.Pdf, images: list[pikepdf.Stream]) -> list[pikepdf.Stream]:
    """Each set of identical images made one, every reference pointed at it; the images kept."""
    kept: dict[bytes, pikepdf.Stream] = {}
    replaced: dict[tuple[int, int], pikepdf.Stream] = {}
    for image in images:
        try:
            key = _identity(image)
        except _IMAGE_ERRORS:
            key = repr(image.objgen).encode()
        if key in kept:
            replaced[image.objgen] = kept[key]
        else:
            kept[key] = image
    if replaced:
        for obj in pdf.objects:
            try:
                _repoint(obj, replaced)
            except _IMAGE_ERRORS as error:  # a damaged object: whatever it referred to is still kept
                log.info("an object's references were left as they were: %s", error)
    return list(kept.values())


def _identity(image: pikepdf.Stream) -> bytes:
    """The image's stored bytes and its dictionary: equal for two images that draw the same."""
    entries = pikepdf.Dictionary({k: v for k, v in image.stream_dict.items() if k != "/Length"})
    digest = hashlib.sha256(bytes(image.read_raw_bytes()))
    digest.update(entries.unparse())
    return digest.digest()


def _repoint(container: pikepdf.Object, replaced: dict[tuple[int, int], pikepdf.Stream]) -> None:
    """References in ``container`` (and its direct parts) to a replaced image, pointed at the one kept."""
    if isinstance(container, pikepdf.Array):
        slots: Iterator = iter(range(len(container)))
    elif isinstance(container, pikepdf.Dictionary | pikepdf.Stream):
        slots = iter(list(container.keys()))
    else:
        return
    for slot in slots:
        value: Any = container[slot]
        if not isinstance(value, pikepdf.Object):
            continue  # a number, a boolean: pikepdf gives it as Python's
        if value.is_indirect:
            if value.objgen in replaced:
                container[slot] = replaced[value.objgen]
        elif isinstance(value, pikepdf.Array | pikepdf.Dictionary):
            _repoint(value, replaced)


# --- one image --------------------------------------------------------------------------------


@dataclass
class _Encoded:
    data: bytes
    filter: object
    decode_parms: object = None
    grey: bool = False  # the image made grey: its colour space becomes /DeviceGray


def _optimize_image(image: pikepdf.Stream, level: int, is_mask: bool, max_pixels: int) -> None:
    """The image stored in the smallest of the forms its level allows, if one is smaller than it is now."""
    width, height = int(image.get("/Width", 0)), int(image.get("/Height", 0))
    if width < 1 or height < 1 or width * height > max_pixels:
        return
    raw = bytes(image.read_raw_bytes())
    filters = _filters(image)
    lossy = level >= 2 and _may_lose(image, is_mask)
    if filters == ["/DCTDecode"] and "/DecodeParms" not in image:
        candidates = _jpeg_forms(image, raw, lossy)
    elif filters in ([], ["/FlateDecode"]) and _inflates_within(raw, filters, MAX_INFLATED_BYTES):
        candidates = _sample_forms(image, bytes(image.read_bytes()), width, height, lossy)
    else:
        return
    best = min(candidates, key=lambda encoded: len(encoded.data))
    if len(best.data) < len(raw):
        _write(image, best)


def _jpeg_forms(image: pikepdf.Stream, jpeg: bytes, lossy: bool) -> list[_Encoded]:
    """A JPEG as it is, wrapped in Flate, and (``lossy``) encoded again at ``JPEG_QUALITY``."""
    as_is = _Encoded(jpeg, pikepdf.Name.DCTDecode)
    forms = [as_is, _flate_wrapped(as_is)]
    if lossy:
        with Image.open(io.BytesIO(jpeg), formats=("JPEG",)) as decoded:
            decoded.load()
            again = _as_jpeg(image, decoded) if len(decoded.getbands()) == _components(image) else None
        if again is not None:
            forms.append(again)
    return forms


def _sample_forms(image: pikepdf.Stream, samples: bytes, width: int, height: int, lossy: bool) -> list[_Encoded]:
    """Decoded samples in Group 4 (1 bit), (``lossy``) as a JPEG, and in Flate, with the PNG predictors or without.

    Flate at its best level is slow on a large page (2 s for a 300-dpi
    colour page), so whether the PNG predictors help is found at zlib's
    fastest level, and only the better way is compressed at the best; it is
    not compressed at all when the JPEG is far smaller than even that.
    """
    bits = int(image.get("/BitsPerComponent", 1 if image.get("/ImageMask") else 8))
    components = _components(image)
    forms = []
    pixels = _pixels(samples, width, height, components, bits)
    if components == 1 and bits == 1 and len(samples) == height * ((width + 7) // 8):
        group4 = _group4(samples, width, height)
        if group4 is not None:
            forms.append(group4)
    jpeg = _as_jpeg(image, pixels) if lossy and pixels is not None else None
    if jpeg is not None:
        forms.append(jpeg)
    quick_rows = len(zlib.compress(samples, 1))
    quick_predicted = len(_png_predicted(pixels, 1).data) if pixels is not None else quick_rows + 1
    if jpeg is not None and len(jpeg.data) < _JPEG_SURELY_SMALLER * min(quick_rows, quick_predicted):
        return forms
    if pixels is not None and quick_predicted < quick_rows:
        forms.append(_png_predicted(pixels, FLATE_LEVEL))
    else:
        forms.append(_Encoded(zlib.compress(samples, FLATE_LEVEL), pikepdf.Name.FlateDecode))
    return forms


def _write(image: pikepdf.Stream, encoded: _Encoded) -> None:
    image.write(encoded.data, filter=encoded.filter, decode_parms=encoded.decode_parms)  # type: ignore[arg-type]
    if encoded.grey:
        image.ColorSpace = pikepdf.Name.DeviceGray


def _filters(stream: pikepdf.Stream) -> list[str]:
    value = stream.get("/Filter")
    if value is None:
        return []
    if isinstance(value, pikepdf.Array):
        return [str(name) for name in value]
    return [str(value)]


def _components(image: pikepdf.Stream) -> int | None:
    """Samples per pixel, from the colour space; None for one this module does not know."""
    if image.get("/ImageMask"):
        return 1
    space = image.get("/ColorSpace")
    if isinstance(space, pikepdf.Name):
        return _COMPONENTS.get(str(space))
    if isinstance(space, pikepdf.Array) and len(space) >= 2:
        family = str(space[0])
        if family in ("/Indexed", "/Separation"):
            return 1
        if family == "/DeviceN" and isinstance(space[1], pikepdf.Array):
            return len(space[1])
        if family == "/ICCBased" and isinstance(space[1], pikepdf.Stream):
            return int(space[1].get("/N", 0)) or None
        if family in _COMPONENTS:
            return _COMPONENTS[family]
    return None


def _may_lose(image: pikepdf.Stream, is_mask: bool) -> bool:
    """Whether the image's samples may change a little: a picture, in grey or colour, and nothing else."""
    if is_mask or image.get("/ImageMask") or "/Decode" in image or isinstance(image.get("/Mask"), pikepdf.Array):
        return False
    soft_mask = image.get("/SMask")
    if isinstance(soft_mask, pikepdf.Stream) and "/Matte" in soft_mask:
        return False
    if int(image.get("/BitsPerComponent", 0)) != 8:
        return False
    space = image.get("/ColorSpace")
    if isinstance(space, pikepdf.Name):
        return str(space) in _GREY_SPACES | _RGB_SPACES
    return _components(image) in (1, 3) and isinstance(space, pikepdf.Array) and str(space[0]) == "/ICCBased"


def _inflates_within(raw: bytes, filters: list[str], limit: int) -> bool:
    """Whether the stream's data is whole (a truncated stream is left as it came) and inflates to ``limit`` at most.

    Inflated a piece at a time and thrown away, so that a zip bomb costs a
    piece of memory, not what it would inflate to.
    """
    if not filters:
        return True
    inflater = zlib.decompressobj()
    piece, size = inflater.decompress(raw, _INFLATE_PIECE), 0
    while True:
        size += len(piece)
        if size > limit:
            return False
        if inflater.eof or (not inflater.unconsumed_tail and len(piece) < _INFLATE_PIECE):
            return inflater.eof
        piece = inflater.decompress(inflater.unconsumed_tail, _INFLATE_PIECE)


def _pixels(samples: bytes, width: int, height: int, components: int | None, bits: int) -> Image.Image | None:
    """The samples as a Pillow image, for 8-bit grey (or any one component of 8 bits) and RGB."""
    if bits != 8 or components not in _PIL_MODES or len(samples) != width * height * components:
        return None
    return Image.frombytes(_PIL_MODES[components], (width, height), samples)


def _png_predicted(pixels: Image.Image, level: int) -> _Encoded:
    """The pixels as a PNG's compressed rows: Flate with the PNG predictors, each row filtered its best way."""
    buffer = io.BytesIO()
    pixels.save(buffer, "PNG", compress_level=level)
    data = _png_idat(buffer.getvalue())
    parms = pikepdf.Dictionary(Predictor=15, Colors=len(pixels.getbands()), BitsPerComponent=8, Columns=pixels.width)
    return _Encoded(data, pikepdf.Name.FlateDecode, parms)


def _png_idat(png: bytes) -> bytes:
    position, chunks = 8, []
    while position + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[position : position + 8])
        if kind == b"IDAT":
            chunks.append(png[position + 8 : position + 8 + length])
        position += 12 + length
    return b"".join(chunks)


def _group4(samples: bytes, width: int, height: int) -> _Encoded | None:
    """1-bit samples in CCITT Group 4, one strip, each sample's value kept (``BlackIs1``)."""
    bitmap = Image.frombytes("1", (width, height), samples)
    buffer = io.BytesIO()
    # One strip: a PDF's CCITT stream is one, and every TIFF strip starts afresh.
    bitmap.save(buffer, "TIFF", compression="group4", tiffinfo={_TIFF_ROWS_PER_STRIP: height})
    data = buffer.getvalue()
    with Image.open(io.BytesIO(data)) as encoded:
        tags = getattr(encoded, "tag_v2", {})
        offsets, counts = tags.get(_TIFF_STRIP_OFFSETS), tags.get(_TIFF_STRIP_BYTE_COUNTS)
        min_is_black = tags.get(_TIFF_PHOTOMETRIC, 0) == 1
    if not offsets or not counts or len(offsets) != 1:
        return None
    strip = data[offsets[0] : offsets[0] + counts[0]]
    # The code's "black" runs are the pixels of value 1 when Pillow writes them min-is-black.
    parms = pikepdf.Dictionary(K=-1, Columns=width, Rows=height, BlackIs1=min_is_black)
    return _Encoded(strip, pikepdf.Name.CCITTFaxDecode, parms)


def _as_jpeg(image: pikepdf.Stream, pixels: Image.Image) -> _Encoded | None:
    """The image as a JPEG at ``JPEG_QUALITY``, made grey first if it is; None for pixels a JPEG cannot hold."""
    if pixels.mode not in ("L", "RGB"):
        return None
    grey = False
    if pixels.mode == "RGB" and image.get("/ColorSpace") == pikepdf.Name.DeviceRGB and _really_grey(pixels):
        pixels, grey = pixels.convert("L"), True
    buffer = io.BytesIO()
    pixels.save(buffer, "JPEG", quality=JPEG_QUALITY)
    # MozJPEG's lossless pass: the same coefficients in progressive scans and Huffman tables chosen for them.
    jpeg = mozjpeg_lossless_optimization.optimize(buffer.getvalue())
    return _flate_wrapped(_Encoded(jpeg, pikepdf.Name.DCTDecode, grey=grey))


def _really_grey(pixels: Image.Image) -> bool:
    red, green, blue = pixels.split()
    apart = (ImageChops.difference(*pair) for pair in ((red, green), (green, blue), (red, blue)))
    # No pixel's two channels further apart than GREY_SPREAD: nothing left once those within it are made 0.
    return all(difference.point(lambda v: 255 if v > GREY_SPREAD else 0).getbbox() is None for difference in apart)


def _flate_wrapped(encoded: _Encoded) -> _Encoded:
    """A JPEG wrapped in Flate where that is smaller (a JPEG's Huffman code often leaves a tenth to take)."""
    wrapped = zlib.compress(encoded.data, FLATE_LEVEL)
    if len(wrapped) >= len(encoded.data):
        return encoded
    filters = pikepdf.Array([pikepdf.Name.FlateDecode, pikepdf.Name.DCTDecode])
    return _Encoded(wrapped, filters, None, encoded.grey)


# --- other streams ----------------------------------------------------------------------------


def _recompress(stream: pikepdf.Stream) -> None:
    """A Flate-compressed or uncompressed stream compressed at ``FLATE_LEVEL``, if that is smaller."""
    filters = _filters(stream)
    if filters not in ([], ["/FlateDecode"]):
        return
    raw = bytes(stream.read_raw_bytes())
    if not _inflates_within(raw, filters, MAX_INFLATED_BYTES):
        return
    compressed = zlib.compress(bytes(stream.read_bytes()), FLATE_LEVEL)
    if len(compressed) < len(raw):
        stream.write(compressed, filter=pikepdf.Name.FlateDecode)

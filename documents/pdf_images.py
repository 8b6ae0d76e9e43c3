"""An image as PDF pages, embedded as it came: one page per frame, sized from its resolution.

A JPEG goes in byte for byte (``DCTDecode``): grey, RGB or CMYK, an Adobe
CMYK JPEG with the inverted ``/Decode`` its inverted samples need.  A PNG's
compressed data goes in as it is too (``FlateDecode`` with the PNG
predictors) when the PDF can read it so: not interlaced, no alpha and no
transparent colour.  A TIFF frame in CCITT Group 4 or in JPEG, one strip,
goes in as its own data too (``CCITTFaxDecode``; ``DCTDecode``, the JPEG's
tables joined to it).  Any other image (a TIFF frame, a PNG with alpha) is
decoded and its pixels stored losslessly with ``FlateDecode``: a 1-bit image
stays 1-bit, a palette stays a palette (``Indexed``), 16-bit grey stays 16
bits, and an alpha channel becomes a soft mask.  Nothing is ever scaled.

The page is as large as the image at its resolution, as img2pdf makes it:
the one it states, or the one its result recorded (``options.image_dpi``,
or the estimate of ``documents.resolution``) for an image that states none
or was given one; without either, ``RENDER_DPI``.  The
engines read an image turned as its EXIF orientation says
(``documents.pages``), so the page shows it that way without touching the
image: ``/Rotate`` for the quarter and half turns, a mirroring matrix in the
page's content for the mirrored orientations.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pikepdf
from PIL import ExifTags, Image, UnidentifiedImageError

from documents import sniffing
from documents.pages import RENDER_DPI
from documents.resolution import stated_dpi
from jobs.errors import InvalidDocument

POINTS_PER_INCH = 72
_IMAGE_FORMATS = ("PNG", "JPEG", "TIFF")
_JPEG_COLOUR_SPACES = {"L": pikepdf.Name.DeviceGray, "RGB": pikepdf.Name.DeviceRGB, "CMYK": pikepdf.Name.DeviceCMYK}
# EXIF orientation -> (/Rotate, whether the displayed image is the stored one mirrored).
_QUARTER_TURNS = {3: 180, 6: 90, 8: 270}
_MIRRORED = frozenset({2, 4, 5, 7})
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TIFF_PHOTOMETRIC, _TIFF_FILL_ORDER, _TIFF_STRIP_OFFSETS, _TIFF_ROWS_PER_STRIP, _TIFF_STRIP_BYTE_COUNTS = (
    262,
    266,
    273,
    278,
    279,
)
_TIFF_JPEG_TABLES = 347
# A JPEG-compressed TIFF's photometric interpretation -> the /ColorTransform its JPEG data needs (None: grey).
_TIFF_JPEG_TRANSFORMS = {("L", 1): None, ("RGB", 2): 0, ("RGB", 6): 1}
_PNG_COLOURS = {0: 1, 2: 3, 3: 1}  # colour type -> components in the data (palette: one index)


@dataclass(frozen=True)
class ImagePage:
    """A page added for one frame, and the dpi its pixels are at (the space of a result's boxes)."""

    page: pikepdf.Page
    dpi: float


def add_image_pages(
    pdf: pikepdf.Pdf, data: bytes, frames: Sequence[int] | None, dpis: Mapping[int, float] | None = None
) -> list[ImagePage]:
    """A page for each of ``frames`` (0-based; None: every frame) of the image, appended to ``pdf``.

    ``dpis``: by frame, the resolution to size its page at instead of the one it states.
    """
    media_type = sniffing.sniff(data)
    if media_type not in (sniffing.PNG, sniffing.JPEG, sniffing.TIFF):
        raise InvalidDocument("the image is not a PNG, JPEG or TIFF image")
    try:
        image = Image.open(io.BytesIO(data), formats=_IMAGE_FORMATS)
    except UnidentifiedImageError:
        raise InvalidDocument("the image is not a PNG, JPEG or TIFF image") from None
    with image:
        count = getattr(image, "n_frames", 1) if media_type == sniffing.TIFF else 1
        chosen = list(range(count)) if frames is None else list(frames)
        if missing := [index for index in chosen if not 0 <= index < count]:
            raise InvalidDocument(f"the image has {count} page(s), not pages {missing} (0-based)")
        pages = []
        for index in chosen:
            image.seek(index)
            pages.append(_add_page(pdf, image, data, media_type, (dpis or {}).get(index)))
        return pages


def _add_page(pdf: pikepdf.Pdf, image: Image.Image, data: bytes, media_type: str, dpi: float | None) -> ImagePage:
    xobject = _image_xobject(pdf, image, data, media_type)
    dpi_x, dpi_y = (dpi, dpi) if dpi else _dpi(image)
    width, height = image.width * POINTS_PER_INCH / dpi_x, image.height * POINTS_PER_INCH / dpi_y
    orientation = _orientation(image)
    placement, box = _placement(orientation, width, height)
    content = f"q {' '.join(f'{v:.4f}' for v in placement)} cm /Im0 Do Q".encode("ascii")
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, *(round(v, 4) for v in box)],
        Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=xobject)),
        Contents=pikepdf.Stream(pdf, content),
    )
    if orientation in _QUARTER_TURNS:
        page.Rotate = _QUARTER_TURNS[orientation]
    pdf.pages.append(pikepdf.Page(page))
    # The engines read the pixels at this dpi; a mirrored quarter turn swaps the axes.
    dpi = dpi_y if orientation in (5, 7) else dpi_x
    return ImagePage(pdf.pages[-1], dpi)


def _image_xobject(pdf: pikepdf.Pdf, image: Image.Image, data: bytes, media_type: str) -> pikepdf.Stream:
    """The frame as it came where a PDF reads it so (a JPEG, a PNG, a Group 4 strip); else its pixels, lossless."""
    if media_type == sniffing.JPEG and image.mode in _JPEG_COLOUR_SPACES:
        return _jpeg(pdf, image, data)
    as_is = None
    if media_type == sniffing.PNG:
        as_is = _png_as_is(pdf, data)
    elif media_type == sniffing.TIFF:
        as_is = _group4_as_is(pdf, image, data)
        if as_is is None:
            as_is = _tiff_jpeg_as_is(pdf, image, data)
    if as_is is not None:
        return as_is
    image.load()
    return _decoded(pdf, image)


def _placement(orientation: int, width: float, height: float) -> tuple[tuple[float, ...], tuple[float, float]]:
    """The matrix drawing the image (a unit square) on its page, and the page's size.

    ``width`` x ``height`` are the stored image's size in points; the
    mirrored orientations draw it as displayed (5 and 7 on a page turned a
    quarter), the others as stored, ``/Rotate`` turning the page.
    """
    if orientation == 2:  # mirrored left to right
        return (-width, 0, 0, height, width, 0), (width, height)
    if orientation == 4:  # mirrored top to bottom
        return (width, 0, 0, -height, 0, height), (width, height)
    if orientation == 5:  # transposed: the stored rows are the displayed columns
        return (0, -width, -height, 0, height, width), (height, width)
    if orientation == 7:  # transversed: transposed and turned a half turn
        return (0, width, height, 0, 0, 0), (height, width)
    return (width, 0, 0, height, 0, 0), (width, height)


def _orientation(image: Image.Image) -> int:
    try:
        value = image.getexif().get(ExifTags.Base.Orientation, 1)
    except (OSError, ValueError, SyntaxError, struct.error):
        return 1
    return value if isinstance(value, int) and (value in _QUARTER_TURNS or value in _MIRRORED) else 1


def _dpi(image: Image.Image) -> tuple[float, float]:
    """The image's resolution, each axis; ``RENDER_DPI`` where it states none."""
    return stated_dpi(image) or (float(RENDER_DPI), float(RENDER_DPI))


def _jpeg(pdf: pikepdf.Pdf, image: Image.Image, data: bytes) -> pikepdf.Stream:
    stream = _image_stream(pdf, data, image.width, image.height, _JPEG_COLOUR_SPACES[image.mode], 8)
    stream.Filter = pikepdf.Name.DCTDecode
    if image.mode == "CMYK" and "adobe" in image.info:
        # Adobe's applications write CMYK JPEGs with every sample inverted.
        stream.Decode = [1, 0, 1, 0, 1, 0, 1, 0]
    return stream


def _png_as_is(pdf: pikepdf.Pdf, data: bytes) -> pikepdf.Stream | None:
    """The PNG's own compressed data as a Flate stream with PNG predictors, when a PDF reader can use it so."""
    chunks = _png_chunks(data)
    if chunks is None:
        return None
    header, palette, idat, transparent = chunks
    width, height, depth, colour_type, _compression, _filter, interlace = struct.unpack(">IIBBBBB", header)
    if interlace or transparent or colour_type not in _PNG_COLOURS or not idat:
        return None
    if colour_type == 3:
        if not palette or len(palette) % 3:
            return None
        space: object = [pikepdf.Name.Indexed, pikepdf.Name.DeviceRGB, len(palette) // 3 - 1, pikepdf.String(palette)]
    else:
        space = pikepdf.Name.DeviceGray if colour_type == 0 else pikepdf.Name.DeviceRGB
    stream = _image_stream(pdf, idat, width, height, space, depth)
    stream.Filter = pikepdf.Name.FlateDecode
    stream.DecodeParms = pikepdf.Dictionary(
        Predictor=15, Colors=_PNG_COLOURS[colour_type], BitsPerComponent=depth, Columns=width
    )
    return stream


def _group4_as_is(pdf: pikepdf.Pdf, image: Image.Image, data: bytes) -> pikepdf.Stream | None:
    """A bilevel TIFF frame's CCITT Group 4 data as it is (``CCITTFaxDecode``), when it is one strip in bit order."""
    tags = getattr(image, "tag_v2", None)
    if tags is None or image.info.get("compression") != "group4" or tags.get(_TIFF_FILL_ORDER, 1) != 1:
        return None
    offsets, counts = tags.get(_TIFF_STRIP_OFFSETS), tags.get(_TIFF_STRIP_BYTE_COUNTS)
    if not offsets or not counts or len(offsets) != 1 or len(counts) != 1:
        return None
    strip = data[offsets[0] : offsets[0] + counts[0]]
    if len(strip) != counts[0]:
        return None
    stream = _image_stream(pdf, strip, image.width, image.height, pikepdf.Name.DeviceGray, 1)
    stream.Filter = pikepdf.Name.CCITTFaxDecode
    # The code's "black" runs are the pixels of value 1; min-is-black makes those white.
    black_is_1 = tags.get(_TIFF_PHOTOMETRIC, 0) == 1
    stream.DecodeParms = pikepdf.Dictionary(K=-1, Columns=image.width, Rows=image.height, BlackIs1=black_is_1)
    return stream


def _tiff_jpeg_as_is(pdf: pikepdf.Pdf, image: Image.Image, data: bytes) -> pikepdf.Stream | None:
    """A JPEG-compressed TIFF frame's JPEG data as it is (``DCTDecode``), when it is one strip.

    TIFF keeps a JPEG's tables apart (``JPEGTables``) from its strips, so the
    strip is joined to them to make the whole JPEG a PDF reader decodes.
    """
    tags = getattr(image, "tag_v2", None)
    if tags is None or image.info.get("compression") != "jpeg":
        return None
    transform = _TIFF_JPEG_TRANSFORMS.get((image.mode, tags.get(_TIFF_PHOTOMETRIC)), -1)
    offsets, counts = tags.get(_TIFF_STRIP_OFFSETS), tags.get(_TIFF_STRIP_BYTE_COUNTS)
    if transform == -1 or not offsets or not counts or len(offsets) != 1 or len(counts) != 1:
        return None
    jpeg = data[offsets[0] : offsets[0] + counts[0]]
    tables = tags.get(_TIFF_JPEG_TABLES)
    if isinstance(tables, bytes) and tables.startswith(b"\xff\xd8") and tables.endswith(b"\xff\xd9"):
        jpeg = tables[:-2] + jpeg[2:]  # the tables' SOI, their tables, then the strip after its own SOI
    try:
        with Image.open(io.BytesIO(jpeg), formats=("JPEG",)) as whole:
            if whole.size != image.size or len(whole.getbands()) != len(image.getbands()):
                return None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error):
        return None
    stream = _image_stream(pdf, jpeg, image.width, image.height, _JPEG_COLOUR_SPACES[image.mode], 8)
    stream.Filter = pikepdf.Name.DCTDecode
    if transform is not None:
        # TIFF writes no Adobe marker: say whether the samples are YCbCr (1) or RGB as they are (0).
        stream.DecodeParms = pikepdf.Dictionary(ColorTransform=transform)
    return stream


def _png_chunks(data: bytes) -> tuple[bytes, bytes, bytes, bool] | None:
    """The PNG's IHDR, PLTE, concatenated IDAT data and whether it has a tRNS chunk; None if malformed."""
    if not data.startswith(_PNG_SIGNATURE):
        return None
    position, header, palette, transparent = len(_PNG_SIGNATURE), b"", b"", False
    idat = []
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if len(body) != length:
            return None
        if kind == b"IHDR":
            header = body
        elif kind == b"PLTE":
            palette = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"tRNS":
            transparent = True
        elif kind == b"IEND":
            break
        position += 12 + length  # length, type, body, CRC
    return (header, palette, b"".join(idat), transparent) if len(header) == 13 else None


def _decoded(pdf: pikepdf.Pdf, image: Image.Image) -> pikepdf.Stream:
    """The frame's pixels, stored losslessly; transparency as a soft mask."""
    mask = None
    if image.has_transparency_data:
        with_alpha = image.convert("LA" if image.mode in ("1", "L", "LA", "I;16", "I") else "RGBA")
        mask = _flate(pdf, with_alpha.getchannel("A").tobytes(), image.size, pikepdf.Name.DeviceGray, 8)
        image = with_alpha.convert(with_alpha.mode[:-1])
    if image.mode == "1" and mask is None:
        stream = _bilevel(pdf, image)
    elif image.mode == "1":
        stream = _flate(pdf, image.tobytes(), image.size, pikepdf.Name.DeviceGray, 1)
    elif image.mode == "P":
        palette = bytes(image.getpalette("RGB") or b"")[: 256 * 3] or bytes(range(256)) * 3
        space = [pikepdf.Name.Indexed, pikepdf.Name.DeviceRGB, len(palette) // 3 - 1, pikepdf.String(palette)]
        stream = _flate(pdf, image.tobytes(), image.size, space, 8)
    elif image.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I"):
        stream = _flate(pdf, _sixteen_bits(image), image.size, pikepdf.Name.DeviceGray, 16)
    elif image.mode in ("L", "CMYK", "RGB"):
        stream = _flate(pdf, image.tobytes(), image.size, _JPEG_COLOUR_SPACES[image.mode], 8)
    else:
        rgb = image.convert("RGB")
        stream = _flate(pdf, rgb.tobytes(), image.size, pikepdf.Name.DeviceRGB, 8)
    if mask is not None:
        stream.SMask = mask
    return stream


def _bilevel(pdf: pikepdf.Pdf, image: Image.Image) -> pikepdf.Stream:
    """A 1-bit image in CCITT Group 4, what scanners store it in, or Flate if that is smaller (a dithered picture)."""
    buffer = io.BytesIO()
    # One strip: a PDF's CCITT stream is one, and every strip starts afresh.
    image.save(buffer, "TIFF", compression="group4", tiffinfo={_TIFF_ROWS_PER_STRIP: image.height})
    with Image.open(buffer) as encoded:
        group4 = _group4_as_is(pdf, encoded, buffer.getvalue())
    flate = zlib.compress(image.tobytes(), 9)
    if group4 is not None and len(group4.read_raw_bytes()) <= len(flate):
        return group4
    return _flate(pdf, image.tobytes(), image.size, pikepdf.Name.DeviceGray, 1)


def _sixteen_bits(image: Image.Image) -> bytes:
    """16-bit grey samples, big-endian as a PDF wants them (a 32-bit "I" image holds 16-bit samples)."""
    return image.tobytes("raw", "I;16B")


def _flate(pdf: pikepdf.Pdf, samples: bytes, size: tuple[int, int], space: object, depth: int) -> pikepdf.Stream:
    stream = _image_stream(pdf, zlib.compress(samples, 9), size[0], size[1], space, depth)
    stream.Filter = pikepdf.Name.FlateDecode
    return stream


def _image_stream(pdf: pikepdf.Pdf, data: bytes, width: int, height: int, space: object, depth: int) -> pikepdf.Stream:
    stream = pikepdf.Stream(pdf, data)
    stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    stream.Width, stream.Height = width, height
    stream.ColorSpace, stream.BitsPerComponent = space, depth
    return stream

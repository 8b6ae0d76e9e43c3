import io
import threading

import pytest
from PIL import Image, ImageDraw

from documents.limits import DocumentLimits
from documents.pages import open_document, render_pages
from jobs.errors import InvalidDocument


def encode(image: Image.Image, fmt: str, **params) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **params)
    return buf.getvalue()


def solid(size, colour="white", mode="RGB") -> Image.Image:
    return Image.new(mode, size, colour)


def rgb_at(image: Image.Image, xy: tuple[int, int]) -> tuple[int, ...]:
    """A pixel's bands: Pillow types ``getpixel`` for every mode, one band and none included."""
    pixel = image.getpixel(xy)
    assert isinstance(pixel, tuple), f"a {image.mode} image has one band"
    return pixel


def two_page_pdf() -> bytes:
    # 4x3 and 2x5 inches at 100 px per inch: the page sizes tell the pages apart.
    first, second = solid((400, 300), "red"), solid((200, 500), "blue")
    return encode(first, "PDF", resolution=100, save_all=True, append_images=[second])


# --- images ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "content_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("TIFF", "image/tiff")]
)
def test_image_is_one_rgb_page(fmt, content_type):
    pages = render_pages(encode(solid((120, 80), "red"), fmt), content_type)

    assert len(pages) == 1
    assert pages[0].mode == "RGB"
    assert pages[0].size == (120, 80)
    assert rgb_at(pages[0], (60, 40))[0] > 240


def test_multi_frame_tiff_is_one_page_per_frame_in_order():
    frames = [solid((100 + 10 * i, 50), (40 * i, 0, 0)) for i in range(3)]
    data = encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])

    with open_document(data, "image/tiff") as doc:
        assert doc.page_count == 3
        pages = list(doc.pages())

    assert [page.size for page in pages] == [(100, 50), (110, 50), (120, 50)]
    assert [rgb_at(page, (0, 0))[0] for page in pages] == [0, 40, 80]


def test_animated_png_frames_are_not_pages():
    frames = [solid((40, 40), "red"), solid((40, 40), "blue")]
    data = encode(frames[0], "PNG", save_all=True, append_images=frames[1:])

    assert len(render_pages(data, "image/png")) == 1


def test_greyscale_stays_single_channel_and_bilevel_becomes_greyscale():
    assert render_pages(encode(solid((30, 30), 128, "L"), "PNG"), "image/png")[0].mode == "L"
    assert render_pages(encode(solid((30, 30), 1, "1"), "PNG"), "image/png")[0].mode == "L"


def test_sixteen_bit_greys_are_scaled_not_clipped():
    data = encode(solid((30, 30), 32768, "I;16"), "PNG")

    page = render_pages(data, "image/png")[0]

    assert page.mode == "L"
    assert page.getpixel((0, 0)) == 128


def test_transparency_is_flattened_onto_white():
    image = solid((40, 40), (0, 0, 0, 0), "RGBA")
    ImageDraw.Draw(image).rectangle((10, 10, 29, 29), fill=(0, 0, 0, 255))

    page = render_pages(encode(image, "PNG"), "image/png")[0]

    assert page.mode == "RGB"
    assert page.getpixel((0, 0)) == (255, 255, 255)
    assert page.getpixel((20, 20)) == (0, 0, 0)


def test_exif_orientation_is_applied():
    exif = Image.Exif()
    exif[0x0112] = 6  # stored rotated: display turns it 90 degrees clockwise
    data = encode(solid((60, 20)), "JPEG", exif=exif)

    assert render_pages(data, "image/jpeg")[0].size == (20, 60)


def test_any_supported_raster_format_is_accepted_under_an_image_type():
    assert len(render_pages(encode(solid((10, 10)), "JPEG"), "image/png")) == 1


def test_content_type_parameters_and_case_are_ignored():
    assert len(render_pages(encode(solid((10, 10)), "PNG"), "Image/PNG; name=scan.png")) == 1


# --- PDF ---------------------------------------------------------------------


def test_pdf_pages_render_in_order_at_the_requested_dpi():
    with open_document(two_page_pdf(), "application/pdf", dpi=200) as doc:
        assert doc.page_count == 2
        pages = list(doc.pages())

    assert [page.size for page in pages] == [(800, 600), (400, 1000)]
    assert [page.mode for page in pages] == ["RGB", "RGB"]
    red, green, blue = rgb_at(pages[0], (400, 300))
    assert red > 240 and green < 16 and blue < 16
    red, green, blue = rgb_at(pages[1], (200, 500))
    assert red < 16 and green < 16 and blue > 240
    assert pages[0].info["dpi"] == (200, 200)


def test_huge_pdf_page_is_rendered_smaller_instead_of_failing():
    page = render_pages(two_page_pdf(), "application/pdf", dpi=200, limits=DocumentLimits(max_pixels=100_000))[0]

    assert page.width * page.height <= 100_000
    assert page.width / page.height == pytest.approx(4 / 3, rel=0.02)
    assert page.info["dpi"][0] == round(page.width / 4)  # the page is 4 inches wide


def test_pdf_can_be_closed_half_way_through():
    with open_document(two_page_pdf(), "application/pdf", dpi=200) as doc:
        first = next(iter(doc.pages()))
    assert first.size == (800, 600)


def test_pdfium_is_safe_to_use_from_several_threads():
    data = two_page_pdf()
    sizes, errors = [], []

    def render():
        try:
            for _ in range(5):
                sizes.append(tuple(page.size for page in render_pages(data, "application/pdf", dpi=50)))
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=render) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sizes == [((200, 150), (100, 250))] * 20


# --- failures ----------------------------------------------------------------


def empty_pdf() -> bytes:
    """A well-formed PDF whose page tree has no pages."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "content_type", "message"),
    [
        (b"", "image/png", "empty"),
        (b"", "application/pdf", "empty"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "image/png", "PNG"),
        (b"not an image at all", "image/jpeg", "not a PNG, JPEG or TIFF"),
        (b"%PDF-1.4\n%garbage", "application/pdf", "cannot open the PDF"),
        (b"%PDF-1.4 looks like a PDF", "image/png", "not a PNG, JPEG or TIFF"),
    ],
    ids=["empty-png", "empty-pdf", "corrupt-png", "garbage-jpeg", "garbage-pdf", "pdf-as-png"],
)
def test_undecodable_documents_are_invalid(data, content_type, message):
    with pytest.raises(InvalidDocument, match=message):
        render_pages(data, content_type)


def test_truncated_png_is_invalid():
    data = encode(solid((300, 300), "red"), "PNG")

    with pytest.raises(InvalidDocument, match="cannot decode"):
        render_pages(data[: len(data) // 2], "image/png")


def test_truncated_pdf_is_invalid():
    data = two_page_pdf()

    with pytest.raises(InvalidDocument, match="PDF"):
        render_pages(data[: len(data) // 3], "application/pdf")


def test_pdf_without_pages_is_invalid():
    with pytest.raises(InvalidDocument, match="without pages"):
        render_pages(empty_pdf(), "application/pdf")


@pytest.mark.parametrize("content_type", ["text/plain", "image/gif", "application/octet-stream", ""])
def test_unsupported_content_types_are_invalid(content_type):
    with pytest.raises(InvalidDocument, match="unsupported content type"):
        render_pages(encode(solid((10, 10)), "PNG"), content_type)


@pytest.mark.parametrize(
    "size",
    [(120, 100), (300, 300)],
    ids=["over-limit-pillow-warns", "over-twice-limit-pillow-raises"],
)
def test_images_over_the_pixel_limit_are_invalid(monkeypatch, size):
    # Pillow's own check, as a backstop of the headers' (which the limits below let through).
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)

    with pytest.raises(InvalidDocument, match="pixels"):
        render_pages(encode(solid(size), "PNG"), "image/png", limits=DocumentLimits(max_pixels=10**6))
    with pytest.raises(InvalidDocument, match="pixels"):
        render_pages(encode(solid(size), "PNG"), "image/png", limits=DocumentLimits(max_pixels=10_000))


def test_a_later_tiff_frame_over_the_pixel_limit_is_invalid_before_any_page_is_decoded():
    data = encode(solid((50, 50)), "TIFF", save_all=True, append_images=[solid((200, 200))])

    with pytest.raises(InvalidDocument, match="page 2"):
        open_document(data, "image/tiff", limits=DocumentLimits(max_pixels=10_000))


def _encrypted(user: str) -> bytes:
    import pikepdf

    from tests.pdfs import text_pdf

    with pikepdf.open(io.BytesIO(text_pdf("sealed words"))) as pdf:
        buffer = io.BytesIO()
        pdf.save(buffer, encryption=pikepdf.Encryption(user=user, owner="owner-secret", R=6))
        return buffer.getvalue()


def test_a_pdf_that_needs_a_password_is_an_encrypted_document_and_one_with_an_owner_password_only_is_read():
    from documents.inspection import inspect
    from documents.limits import configured
    from jobs.errors import EncryptedDocument

    with pytest.raises(EncryptedDocument, match="remove the encryption first") as raised:
        open_document(_encrypted("user-secret"), "application/pdf")
    assert raised.value.code == "invalid_document"  # a job that meets one fails as any unreadable document
    with pytest.raises(EncryptedDocument):  # in the forked child the gateway and the workers open a PDF in
        inspect(_encrypted("user-secret"), "application/pdf", configured())
    with pytest.raises(InvalidDocument) as corrupt:
        open_document(b"%PDF-1.7\nnot really a pdf", "application/pdf")
    assert not isinstance(corrupt.value, EncryptedDocument)

    owner_only = _encrypted("")
    assert inspect(owner_only, "application/pdf", configured()) == 1
    with open_document(owner_only, "application/pdf") as document:
        layer = document.text_layer(0)
        assert layer is not None and layer.text == "sealed words"

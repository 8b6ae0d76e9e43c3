"""PDF/A-2b on request and no false claim otherwise, each requirement checked with pikepdf on real documents."""

from __future__ import annotations

import io

import pikepdf
import pytest
from PIL import Image, ImageDraw

from documents.searchable_pdf import SourceDocument, searchable_pdf
from jobs.errors import InvalidDocument
from jobs.pdf_outputs import DEFAULT_OUTPUT, PdfOutput
from tests import bad_documents
from tests.pdfa_checks import claiming_pdfa, claims, image_streams, opened, pdfa_failures
from tests.pdfs import text_pdf
from tests.scans import real_pdf, scanned_pdf
from tests.unit.documents.test_searchable_pdf import layer_pages, line, ocr_page

PDF = "application/pdf"
PDFA = PdfOutput("pdfa")


def built(document: bytes, output: PdfOutput = DEFAULT_OUTPUT, pages: dict | None = None) -> bytes:
    return searchable_pdf([SourceDocument(document, PDF, layer_pages() if pages is None else pages)], output)


def edited(document: bytes, change) -> bytes:
    with pikepdf.open(io.BytesIO(document)) as pdf:
        change(pdf)
        buffer = io.BytesIO()
        pdf.save(buffer, stream_decode_level=pikepdf.StreamDecodeLevel.none, compress_streams=False)  # LZW stays
        return buffer.getvalue()


def scan_and_pages() -> tuple[bytes, dict[int, dict]]:
    pages = layer_pages()
    return scanned_pdf([0, 1]), {0: pages[0], 1: pages[1]}


# --- a plain output claims nothing -------------------------------------------------------------


def test_a_plain_searchable_copy_of_a_pdfa_input_withdraws_its_claims_and_keeps_the_rest():
    document = claiming_pdfa(real_pdf())
    assert claims(document) == {"pdfaid:part": "1", "pdfaid:conformance": "B", "pdfuaid:part": "1"}

    output = built(document)

    assert claims(output) == {}
    with opened(output) as pdf:
        assert pdf.open_metadata()["dc:title"] == "Shared MIME-info Database"
        assert len(pdf.Root.OutputIntents) == 1  # how its colours are meant: no claim, kept


def test_a_pdfx_claim_is_withdrawn_from_a_plain_output_and_from_a_pdfa():
    def pdfx(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo["/GTS_PDFXVersion"] = "PDF/X-4"
        with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
            meta["pdfxid:GTS_PDFXVersion"] = "PDF/X-4"

    document = edited(real_pdf(), pdfx)
    assert claims(document) == {"pdfxid:GTS_PDFXVersion": "PDF/X-4", "Info /GTS_PDFXVersion": "PDF/X-4"}

    assert claims(built(document)) == {}
    assert claims(built(document, PDFA)) == {"pdfaid:part": "2", "pdfaid:conformance": "B"}


def test_a_plain_output_of_a_scan_or_an_image_claims_nothing():
    scan, pages = scan_and_pages()

    assert claims(built(scan, pages=pages)) == {}
    assert claims(searchable_pdf([SourceDocument(claiming_pdfa(scan), PDF, pages, only=[1])])) == {}


def test_the_checks_find_what_a_plain_output_misses():
    failures = pdfa_failures(built(real_pdf()))

    assert any(f.startswith("metadata: the catalog has no XMP") for f in failures)
    assert any(f.startswith("output intent") for f in failures)


# --- a PDF/A output meets each requirement -----------------------------------------------------


def test_a_scan_made_pdfa_meets_each_requirement_and_keeps_its_image_bytes():
    scan, pages = scan_and_pages()

    output = built(scan, PDFA, pages)

    assert pdfa_failures(output) == []
    assert claims(output) == {"pdfaid:part": "2", "pdfaid:conformance": "B"}
    assert image_streams(output) == image_streams(scan)
    assert len(output) <= 1.05 * len(built(scan, pages=pages))


def test_the_real_born_digital_pdf_made_pdfa_meets_each_requirement_and_keeps_its_pages():
    output = built(real_pdf(), PDFA)

    assert pdfa_failures(output) == []
    with opened(output) as pdf, opened(real_pdf()) as source:
        assert len(pdf.pages) == len(source.pages)
        for page, original in zip(pdf.pages, source.pages, strict=True):
            # The page's own content is drawn as it was: its stream is one of the page's, byte for byte.
            contents = page.obj.Contents
            streams = contents if isinstance(contents, pikepdf.Array) else [contents]
            drawn = [stream.read_bytes() for stream in streams]
            assert original.obj.Contents.read_bytes() in drawn
        assert "/Outlines" in pdf.Root and "/PageLabels" in pdf.Root
        info = pdf.docinfo
        assert (str(info.Creator), str(info.Producer)) == ("LaTeX with hyperref", "pdfTeX-1.40.22")
        assert str(info.CreationDate) == "D:20220429171908Z" and str(info.ModDate) != "D:20220429171908Z"
        assert "/Title" not in info  # it was empty: an empty title would be a title to match


def test_an_unreadable_creation_date_gives_way_to_the_xmps_and_the_two_agree():
    def dated(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo["/CreationDate"] = "last Tuesday"
        pdf.docinfo["/Title"] = "The spec"
        with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False) as meta:
            meta["xmp:CreateDate"] = "2022-04-29T17:19:08+00:00"

    output = built(edited(real_pdf(), dated), PDFA)

    assert pdfa_failures(output) == []
    with opened(output) as pdf:
        assert str(pdf.docinfo.CreationDate).startswith("D:20220429171908")
        assert pdf.open_metadata()["dc:title"] == "The spec"


def test_the_text_layers_font_is_embedded_with_its_tounicode_map():
    scan, pages = scan_and_pages()
    output = built(scan, PDFA, pages)

    with opened(output) as pdf:
        font = next(f for f in pdf.pages[0].Resources.Font.values() if f.get("/Subtype") == pikepdf.Name.Type0)
        descriptor = font.DescendantFonts[0].FontDescriptor
        assert "/FontFile2" in descriptor and b"beginbfchar" in font.ToUnicode.read_bytes()


def test_a_pdfa_input_made_pdfa_claims_2b_and_keeps_its_own_output_intent():
    output = built(claiming_pdfa(real_pdf()), PDFA)

    assert pdfa_failures(output) == []
    assert claims(output) == {"pdfaid:part": "2", "pdfaid:conformance": "B"}
    with opened(output) as pdf:
        (intent,) = pdf.Root.OutputIntents
        assert str(intent.OutputConditionIdentifier) == "sRGB"


def test_an_owner_password_pdf_made_pdfa_is_no_longer_encrypted():
    buffer = io.BytesIO()
    with pikepdf.open(io.BytesIO(real_pdf())) as pdf:
        pdf.save(buffer, encryption=pikepdf.Encryption(owner="owner", user="", aes=True, R=6))

    output = built(buffer.getvalue(), PDFA)

    assert pdfa_failures(output) == []


def test_javascript_and_forbidden_actions_go_and_allowed_ones_stay():
    def scripted(pdf: pikepdf.Pdf) -> None:
        script = pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert('hi')"))
        uri = pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://example.org/"))
        pdf.Root.Names = pikepdf.Dictionary(JavaScript=pikepdf.Dictionary(Names=[pikepdf.String("hi"), script]))
        pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("1"), Next=uri)
        pdf.Root.AA = pikepdf.Dictionary(WC=script)
        page = pdf.pages[0].obj
        page.AA = pikepdf.Dictionary(O=script)
        page.Annots = pdf.make_indirect(pikepdf.Array([
            pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[0, 0, 50, 50], A=script, F=2),
            pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[0, 60, 50, 90], A=uri),
            pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Sound, Rect=[0, 90, 50, 99]),
        ]))  # fmt: skip

    output = built(edited(real_pdf(), scripted), PDFA)

    assert pdfa_failures(output) == []
    with opened(output) as pdf:
        assert pdf.Root.OpenAction.S == pikepdf.Name.URI  # the allowed rest of the chain
        first, second = pdf.pages[0].obj.Annots
        assert "/A" not in first and int(first.F) == 4  # printable and no longer hidden
        assert second.A.S == pikepdf.Name.URI


def test_a_transparency_group_goes_from_a_page_that_draws_nothing_transparent():
    def grouped(pdf: pikepdf.Pdf) -> None:
        for page in pdf.pages:
            page.obj.Group = pikepdf.Dictionary(S=pikepdf.Name.Transparency, CS=pikepdf.Name.DeviceRGB)
            page.obj.Resources.XObject.Scan.Interpolate = True  # which PDF/A forbids too

    scan, pages = scan_and_pages()
    output = built(edited(scan, grouped), PDFA, pages)

    assert pdfa_failures(output) == []
    assert image_streams(output) == image_streams(scan)
    with opened(output) as pdf:
        assert all(page.obj.Resources.XObject.Scan.Interpolate is False for page in pdf.pages)


def test_a_page_that_draws_with_transparency_keeps_its_group_which_pdfa_2_allows():
    def translucent(pdf: pikepdf.Pdf) -> None:
        page = pdf.pages[0].obj
        page.Group = pikepdf.Dictionary(S=pikepdf.Name.Transparency, CS=pikepdf.Name.DeviceRGB)
        page.Resources.ExtGState = pikepdf.Dictionary(Half=pikepdf.Dictionary(ca=0.5))

    scan, pages = scan_and_pages()
    output = built(edited(scan, translucent), PDFA, pages)

    failures = pdfa_failures(output)
    assert len(failures) == 1 and failures[0].startswith("transparency:")
    with opened(output) as pdf:
        assert "/Group" in pdf.pages[0].obj and "/Group" not in pdf.pages[1].obj


# --- what cannot be made PDF/A is refused, with the reason -----------------------------------------


def test_a_page_font_not_embedded_refuses_pdfa_naming_it_and_the_plain_pdf_is_still_made():
    document = text_pdf("Invoice 2291", "Total due 40 EUR")  # fpdf2's core font, Helvetica, is never embedded

    with pytest.raises(InvalidDocument, match="page 1 uses the font Helvetica, which the PDF does not embed"):
        built(document, PDFA, pages={})
    assert built(document, pages={}).startswith(b"%PDF-")


def test_cmyk_colour_under_the_srgb_intent_refuses_pdfa():
    def cmyk(pdf: pikepdf.Pdf) -> None:
        page = pdf.pages[0]
        page.contents_add(pikepdf.Stream(pdf, b"q 0 0 0 1 k 10 10 20 20 re f Q"), prepend=False)

    scan, pages = scan_and_pages()

    with pytest.raises(InvalidDocument, match="page 1 paints in CMYK colour with an RGB output intent"):
        built(edited(scan, cmyk), PDFA, pages)


def test_a_content_stream_that_cannot_be_read_refuses_pdfa_and_the_plain_pdf_is_still_made():
    document = bad_documents.pdf_with_content(b"0 0 0 1 k 0 0 10 10 re f ] >> (unterminated")
    pages = {0: ocr_page(1, [line("seen", (10, 10, 200, 40))], 1700, 2200)}

    with pytest.raises(InvalidDocument, match="page 1 has a content stream that cannot be read"):
        built(document, PDFA, pages)
    assert claims(built(document, pages=pages)) == {}


def test_what_is_refused_is_found_in_a_form_and_under_resources_the_page_inherits():
    def cmyk_in_a_form(pdf: pikepdf.Pdf) -> None:
        form = pikepdf.Stream(pdf, b"0 0 0 1 k 0 0 10 10 re f")
        form.Type, form.Subtype, form.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 10, 10]
        page = pdf.pages[1]
        page.obj.Resources.XObject.Stamp = pdf.make_indirect(form)
        page.contents_add(pikepdf.Stream(pdf, b"q /Stamp Do Q"), prepend=False)

    def inherited_resources(pdf: pikepdf.Pdf) -> None:
        for page in pdf.pages:
            del page.obj.Resources
        pdf.Root.Pages.Resources = pdf.make_indirect(pikepdf.Dictionary(Font=pikepdf.Dictionary(
            F1=pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Courier)
        )))  # fmt: skip

    document = text_pdf("Invoice 2291")
    scan, pages = scan_and_pages()

    with pytest.raises(InvalidDocument, match="page 2 paints in CMYK colour"):
        built(edited(scan, cmyk_in_a_form), PDFA, pages)
    with pytest.raises(InvalidDocument, match="page 1 uses the font Courier"):
        built(edited(document, inherited_resources), PDFA, pages={})


def test_lzw_streams_are_stored_again_without_lzw_their_content_unchanged():
    def lzw_content(pdf: pikepdf.Pdf) -> None:
        page = pdf.pages[0].obj
        content = page.Contents.read_bytes()
        page.Contents = pikepdf.Stream(pdf, lzw(content))
        page.Contents.Filter = pikepdf.Name.LZWDecode

    scan, pages = scan_and_pages()
    document = edited(scan, lzw_content)
    with opened(document) as pdf:
        assert pdf.pages[0].obj.Contents.Filter == pikepdf.Name.LZWDecode
        original = pdf.pages[0].obj.Contents.read_bytes()

    output = built(document, PDFA, pages)

    assert pdfa_failures(output) == []
    with opened(output) as pdf:
        streams = [s for s in pdf.objects if isinstance(s, pikepdf.Stream)]
        assert not any("/LZWDecode" in str(s.get("/Filter", "")) for s in streams)
        assert any(s.read_bytes() == original for s in streams)


def lzw(data: bytes) -> bytes:
    """``data`` compressed as PDF's LZWDecode reads it: 9-bit codes, so no more than the table's first 253 entries."""
    table = {bytes([i]): i for i in range(256)}
    codes, current = [256], b""  # clear-table first
    for byte in data:
        candidate = current + bytes([byte])
        if candidate in table:
            current = candidate
            continue
        codes.append(table[current])
        table[candidate] = len(table) + 2  # 256 and 257 are the clear-table and end codes
        current = bytes([byte])
    codes += [table[current], 257]
    assert len(table) + 2 < 511, "too long for 9-bit codes with early change"
    bits = "".join(f"{code:09b}" for code in codes)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))


def test_the_images_are_optimised_at_the_level_asked_before_the_pdfa_is_made(monkeypatch):
    import documents.searchable_pdf as searchable

    calls: list[tuple[str, object]] = []
    real_optimize, real_make_pdfa = searchable.optimize, searchable.make_pdfa

    def optimize(pdf: pikepdf.Pdf, level: int) -> None:
        calls.append(("optimize", level))
        real_optimize(pdf, level)

    def make_pdfa(pdf: pikepdf.Pdf) -> None:
        calls.append(("make_pdfa", None))
        real_make_pdfa(pdf)

    monkeypatch.setattr(searchable, "optimize", optimize)
    monkeypatch.setattr(searchable, "make_pdfa", make_pdfa)
    scan, pages = scan_and_pages()

    output = built(scan, PdfOutput("pdfa", 2), pages)

    assert calls == [("optimize", 2), ("make_pdfa", None)]
    assert pdfa_failures(output) == []


def image(mode: str, fmt: str) -> bytes:
    picture = Image.new(mode, (400, 200), "white")
    ImageDraw.Draw(picture).text((20, 80), "Invoice 2291", fill="black")
    buffer = io.BytesIO()
    picture.save(buffer, fmt, dpi=(200, 200))
    return buffer.getvalue()


def test_an_image_with_alpha_made_pdfa_keeps_its_soft_mask_and_meets_each_requirement():
    page = {0: ocr_page(1, [line("Invoice 2291", (20, 80, 140, 100))], 400, 200)}

    output = searchable_pdf([SourceDocument(image("RGBA", "PNG"), "image/png", page)], PDFA)

    assert pdfa_failures(output) == []
    with opened(output) as pdf:
        (drawn,) = pdf.pages[0].Resources.XObject.values()
        assert "/SMask" in drawn


def test_a_cmyk_jpeg_refuses_pdfa_under_the_srgb_intent():
    with pytest.raises(InvalidDocument, match="page 1 paints in CMYK colour"):
        searchable_pdf([SourceDocument(image("CMYK", "JPEG"), "image/jpeg", {})], PDFA)

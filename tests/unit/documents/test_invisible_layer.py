"""Taking an earlier invisible text layer off a page: only the strings drawn in render mode 3 go."""

from __future__ import annotations

import io

import pikepdf
import pypdfium2 as pdfium

from documents.invisible_layer import remove_invisible_text
from tests.ocr_layers import LEGEND, STALE_WORD, earlier_ocr_pdf
from tests.scans import page_texts


def page_with(content: bytes) -> tuple[pikepdf.Pdf, pikepdf.Page]:
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(612, 792))
    page = pdf.pages[0]
    font = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
    )
    page.obj.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.obj.Contents = pikepdf.Stream(pdf, content)
    return pdf, page


def content_of(page: pikepdf.Page) -> bytes:
    return page.obj.Contents.read_bytes()


def shown(content: bytes) -> list[str]:
    """The strings a content stream shows, in order."""
    strings = []
    holder = pikepdf.new()  # the stream's owner lives as long as the stream is read
    for instruction in pikepdf.parse_content_stream(pikepdf.Stream(holder, content)):
        if str(instruction.operator) in ("Tj", "'", '"'):
            strings.append(bytes(instruction.operands[-1]).decode())
        elif str(instruction.operator) == "TJ":
            strings.append(
                "".join(bytes(part).decode() for part in instruction.operands[0] if isinstance(part, pikepdf.String))
            )
    return strings


def extracted(pdf: pikepdf.Pdf) -> str:
    buffer = io.BytesIO()
    pdf.save(buffer)
    document = pdfium.PdfDocument(buffer.getvalue())
    try:
        return document[0].get_textpage().get_text_range()
    finally:
        document.close()


def test_text_drawn_invisibly_goes_and_visible_text_stays():
    pdf, page = page_with(
        b"BT /F1 12 Tf 72 700 Td (visible) Tj ET "
        b"BT /F1 12 Tf 3 Tr 72 600 Td (hidden) Tj [(hid) -20 (den2)] TJ ET "
        b"BT /F1 12 Tf 0 Tr 72 500 Td (shown) Tj ET"
    )

    removed = remove_invisible_text(pdf, page)

    assert removed == 2
    assert shown(content_of(page)) == ["visible", "shown"]
    assert extracted(pdf).split() == ["visible", "shown"]


def test_the_render_mode_follows_the_graphics_state_q_and_Q_not_BT_and_ET():
    pdf, page = page_with(
        b"q 3 Tr BT /F1 12 Tf 72 700 Td (inside) Tj ET BT 72 680 Td (still) Tj ET Q "
        b"BT /F1 12 Tf 72 600 Td (restored) Tj ET "
        b"BT /F1 12 Tf 3 Tr 72 500 Td (set) Tj ET BT 72 480 Td (kept-mode) Tj ET"
    )

    remove_invisible_text(pdf, page)

    # Tr outlives ET, and Q restores the mode q saved.
    assert shown(content_of(page)) == ["restored"]


def test_a_dropped_quote_still_moves_to_the_next_line_and_a_double_quote_still_sets_its_spacing():
    pdf, page = page_with(b"BT /F1 12 Tf 14 TL 72 700 Td 3 Tr (one) ' 2 1 (two) \" 0 Tr 72 600 Td (three) Tj ET")

    remove_invisible_text(pdf, page)

    instructions = [(list(i.operands), str(i.operator)) for i in pikepdf.parse_content_stream(page.obj)]
    assert ([], "T*") in instructions
    assert ([2], "Tw") in instructions and ([1], "Tc") in instructions
    assert shown(content_of(page)) == ["three"]


def test_an_invisible_string_that_visible_text_follows_on_its_line_is_kept_so_nothing_visible_moves():
    pdf, page = page_with(b"BT /F1 12 Tf 72 700 Td 3 Tr (lead) Tj 0 Tr (visible) Tj ET BT 3 Tr (alone) Tj ET")

    removed = remove_invisible_text(pdf, page)

    assert removed == 1
    assert shown(content_of(page)) == ["lead", "visible"]


def test_invisible_text_in_a_form_the_page_draws_goes_and_its_visible_text_stays():
    pdf, page = page_with(b"q /Layer Do Q BT /F1 12 Tf 72 700 Td (page) Tj ET")
    form = pikepdf.Stream(
        pdf, b"BT /F1 10 Tf 3 Tr 10 10 Td (formhidden) Tj 0 Tr (x) ' ET BT 0 Tr 10 30 Td (formshown) Tj ET"
    )
    form.Type, form.Subtype, form.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 612, 792]
    form.Resources = page.obj.Resources
    page.obj.Resources.XObject = pikepdf.Dictionary(Layer=pdf.make_indirect(form))
    page_content = content_of(page)

    removed = remove_invisible_text(pdf, page)

    assert removed == 1
    assert content_of(page) == page_content  # the page's own stream had nothing invisible: left as it was
    assert shown(page.obj.Resources.XObject.Layer.read_bytes()) == ["x", "formshown"]
    assert extracted(pdf).split() == ["x", "formshown", "page"]


def test_a_page_without_invisible_text_keeps_every_stream_byte_for_byte():
    pdf, page = page_with(b"BT /F1 12 Tf 72 700 Td (visible) Tj ET")
    raw = page.obj.Contents.read_raw_bytes()

    assert remove_invisible_text(pdf, page) == 0
    assert page.obj.Contents.read_raw_bytes() == raw


def test_an_earlier_ocr_layer_over_a_scan_goes_and_the_scan_and_its_printed_legend_stay():
    document = earlier_ocr_pdf([0])
    assert STALE_WORD in page_texts(document)[0]

    with pikepdf.open(io.BytesIO(document)) as pdf:
        images = {name: bytes(pdf.pages[0].resources.XObject[name].read_raw_bytes()) for name in ("/Scan",)}
        assert remove_invisible_text(pdf, pdf.pages[0]) > 100
        assert {name: bytes(pdf.pages[0].resources.XObject[name].read_raw_bytes()) for name in images} == images
        buffer = io.BytesIO()
        pdf.save(buffer)

    (text,) = page_texts(buffer.getvalue())
    assert text.split() == LEGEND.split()

"""A page range of a PDF cut as a PDF of its own pages only (what a remote model's upstream is sent)."""

from __future__ import annotations

import pytest

from documents.pages import open_document, pdf_pages
from jobs.errors import InvalidDocument
from tests.pdfs import pdf, text_pdf


def texts_of(data: bytes) -> list[str]:
    with open_document(data, "application/pdf") as doc:
        return [layer.text if (layer := doc.text_layer(i)) else "" for i in range(doc.page_count)]


def test_a_page_range_is_a_pdf_of_those_pages():
    data = text_pdf(*(f"Page {n}" for n in range(1, 26)))

    assert texts_of(pdf_pages(data, 11, 20)) == [f"Page {n}" for n in range(11, 21)]
    assert texts_of(pdf_pages(data, 25, 25)) == ["Page 25"]
    assert texts_of(pdf_pages(data, 1, 25)) == [f"Page {n}" for n in range(1, 26)]


def test_a_range_does_not_carry_the_other_pages():
    # Image pages weigh their pixels: a range holding every page would weigh the whole.
    data = pdf([("image", f"PAGE {n}") for n in range(1, 7)])

    assert len(pdf_pages(data, 3, 4)) < len(data) / 2


@pytest.mark.parametrize("first, last", [(0, 1), (2, 1), (3, 4), (4, 4)])
def test_a_range_outside_the_document_is_an_invalid_document(first, last):
    with pytest.raises(InvalidDocument):
        pdf_pages(text_pdf("a", "b", "c"), first, last)

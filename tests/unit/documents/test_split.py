"""Cutting a PDF into page ranges, each a PDF of its own pages only."""

from __future__ import annotations

import pytest

from documents.pages import open_document, split_pdf
from jobs.errors import InvalidDocument
from tests.pdfs import pdf, text_pdf


def texts_of(data: bytes) -> list[str]:
    with open_document(data, "application/pdf") as doc:
        return [layer.text if (layer := doc.text_layer(i)) else "" for i in range(doc.page_count)]


def test_a_25_page_pdf_in_parts_of_10_is_three_parts_of_its_own_pages():
    data = text_pdf(*(f"Page {n}" for n in range(1, 26)))

    parts = split_pdf(data, 10)

    assert [(p.first_page, p.page_count) for p in parts] == [(1, 10), (11, 10), (21, 5)]
    assert texts_of(parts[0].data) == [f"Page {n}" for n in range(1, 11)]
    assert texts_of(parts[1].data) == [f"Page {n}" for n in range(11, 21)]
    assert texts_of(parts[2].data) == [f"Page {n}" for n in range(21, 26)]


def test_parts_do_not_carry_the_other_pages():
    # Image pages weigh their pixels: a part holding every page would weigh the whole.
    data = pdf([("image", f"PAGE {n}") for n in range(1, 7)])

    parts = split_pdf(data, 2)

    assert len(parts) == 3
    assert all(len(p.data) < len(data) / 2 for p in parts)
    assert sum(len(p.data) for p in parts) < 1.2 * len(data)


def test_one_page_parts_and_parts_larger_than_the_document():
    data = text_pdf("a", "b", "c")

    assert [(p.first_page, p.page_count) for p in split_pdf(data, 1)] == [(1, 1), (2, 1), (3, 1)]
    whole = split_pdf(data, 100)
    assert [(p.first_page, p.page_count) for p in whole] == [(1, 3)]
    assert texts_of(whole[0].data) == ["a", "b", "c"]


def test_the_check_sees_the_page_count_before_any_part_is_made():
    seen = []

    class Refused(Exception):
        pass

    def refuse(count: int) -> None:
        seen.append(count)
        raise Refused

    with pytest.raises(Refused):
        split_pdf(text_pdf("a", "b", "c", "d"), 2, refuse)
    assert seen == [4]


@pytest.mark.parametrize("data", [b"not a pdf at all", b"%PDF-1.7\n% truncated", b""])
def test_a_pdf_that_cannot_be_read_is_an_invalid_document(data):
    with pytest.raises(InvalidDocument):
        split_pdf(data, 10)


def test_a_part_size_below_one_is_a_programming_error():
    with pytest.raises(ValueError):
        split_pdf(text_pdf("a"), 0)

"""The generated client reads a result with layout: its pages' blocks, their tables, the document's tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.documents.structured_pages import structured_page

CLIENT = Path(__file__).resolve().parents[3] / "clients" / "python"


def test_a_result_with_layout_reads_into_the_clients_models_and_back(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(CLIENT))
    from ocrgw_client.models.block_type import BlockType
    from ocrgw_client.models.result import Result

    page = structured_page(1)
    tables = [{"number": 1, "page": 1, "block": 7, "rows": 2, "cols": 2, "caption": "Table 1: Ships per quarter"}]
    document = {"text": "", "pages": [page], "tables": tables}

    result = Result.from_dict(document)

    blocks = result.pages[0].blocks
    assert [block.type_ for block in blocks] == [BlockType(b["type"]) for b in page["blocks"]]
    assert blocks[7].table.cells[2].text == "Q1 | first"
    assert result.tables[0].caption == "Table 1: Ships per quarter"
    assert result.to_dict() == document

"""A table of a result as CSV, for ``GET /jobs/{id}/tables/{n}.csv``.

The table is read from the result's JSON (``documents.structure``'s shape:
``rows``, ``cols`` and ``cells``), not from the page again.  The CSV is RFC
4180's: one record a row, every record ``cols`` fields, CRLF between
records, a field quoted when it holds a comma, a quote or a line break
(and its quotes doubled).  A cell that spans rows or columns has its text in
its first row and column; the rest of the span is empty, so that every
value stays in the column its header names and a spreadsheet lines them up.
A cell that names a place outside the table's size is left out.  Kept apart
from the table reader so that the gateway, which serves it, loads no model
and no image library.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from documents.table_export import grid


def table_csv(table: Mapping[str, Any]) -> str:
    """``table`` (a ``documents.structure.Table`` as a dict) as CSV text."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(grid(table))
    return buffer.getvalue()

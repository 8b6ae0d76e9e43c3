"""How the commands print: rich tables on a terminal, plain lines in a pipe, JSON when asked.

Plain output is what scripts read: tab-separated rows without a header,
``key: value`` lines for one job, no colour and no box drawing. On a
terminal the same facts are drawn with rich. ``--json`` prints the
gateway's own document, unchanged, whatever stdout is. Errors and progress
go to stderr, so stdout carries only the answer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cli.statuses import CANCELLED, COMPLETED, FAILED, HELD, PROCESSING, QUEUED, STATUSES

STATUS_STYLES = {
    HELD: "bright_black",
    QUEUED: "cyan",
    PROCESSING: "yellow",
    COMPLETED: "green",
    FAILED: "red",
    CANCELLED: "magenta",
}


def is_terminal(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class Printer:
    """Writes one command's answer to stdout in the form its reader wants."""

    def __init__(self, as_json: bool = False, stream: IO[str] | None = None, rich: bool | None = None):
        self.stream = stream or sys.stdout
        self.as_json = as_json
        self.rich = is_terminal(self.stream) if rich is None else rich
        self.console = Console(file=self.stream, force_terminal=self.rich, highlight=False, soft_wrap=True)

    def json(self, document: Any) -> None:
        self.stream.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")

    def line(self, text: str = "") -> None:
        self.stream.write(text + "\n")

    def text(self, text: str) -> None:
        """A result's text as it is, with one newline at the end."""
        self.stream.write(text if text.endswith("\n") else text + "\n")

    def fields(self, pairs: Iterable[tuple[str, Any]]) -> None:
        """One object: ``key: value`` lines, or a two-column grid on a terminal."""
        pairs = [(k, v) for k, v in pairs if v is not None and v != ""]
        if not self.rich:
            for key, value in pairs:
                self.line(f"{key}: {_plain(value)}")
            return
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        for key, value in pairs:
            grid.add_row(key, value if isinstance(value, Text) else _plain(value))
        self.console.print(grid)

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
        """Rows of cells: tab-separated lines, or a rich table with a header on a terminal."""
        if not self.rich:
            for row in rows:
                self.line("\t".join(_plain(cell) for cell in row))
            return
        table = Table(title=title, title_justify="left", header_style="bold")
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(cell if isinstance(cell, Text) else _plain(cell) for cell in row))
        self.console.print(table)


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLES.get(status, ""))


def counts_text(counts: dict[str, int], *, all_statuses: bool = False, sep: str = "  ") -> Text:
    """``queued 3  processing 2  completed 10``: the statuses that have children (or all of them)."""
    text = Text()
    for status in STATUSES:
        count = counts.get(status, 0)
        if count or all_statuses:
            if text:
                text.append(sep)
            text.append(f"{status} {count}", style=STATUS_STYLES[status])
    return text


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Text):
        return value.plain
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ",".join(_plain(v) for v in value)
    return str(value)

"""mkdocs hook: the job state machine's diagram and table, made from ``jobs.state_machine`` at every build.

A page that shows them carries a marker, replaced here: ``<!-- state-diagram -->`` by the diagram, an
inline SVG drawn in Python (``jobs.state_diagram``: no script draws it in the browser, so it shows under
the manual's Content-Security-Policy and with no network), and ``<!-- state-moves -->`` by the table of
every move.  A status the diagram has no place for stops the build.  The scripts are held to the same
table by tests/unit/jobs/test_state_machine.py, so the picture cannot drift from what runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jobs.state_diagram import svg  # noqa: E402
from jobs.state_machine import markdown_table  # noqa: E402

MARKERS = {
    # A <div> makes the SVG one raw HTML block, which Markdown passes through as it is.
    "<!-- state-diagram -->": lambda: '<div class="state-diagram">\n' + svg() + "\n</div>\n",
    "<!-- state-moves -->": markdown_table,
}


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    for marker, made in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, made())
    return markdown

"""The README stays a short map: at most 200 lines, and every page of the manual it links exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
MAX_LINES = 200


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text().splitlines()

    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines: move the detail into docs/"


def test_every_docs_page_the_readme_links_exists():
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)]*)?\)", README.read_text())

    assert links, "the README links no page of docs/"
    assert [link for link in links if not (ROOT / link).is_file()] == []

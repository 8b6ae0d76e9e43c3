"""An HTML page as the dashboard's tests read it: its elements, each with its attributes and its text."""

from __future__ import annotations

from html.parser import HTMLParser

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None]):
        self.tag, self.attrs = tag, attrs
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    @property
    def hidden(self) -> bool:
        return "hidden" in self.attrs


class Page(HTMLParser):
    """The elements of an HTML page, each with its attributes and its text."""

    def __init__(self, html: str):
        super().__init__()
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.elements.append(element)
        for outer in self._open:
            outer.parts.append(" ")  # an element's start separates words, as a table cell's does on screen
        if tag not in _VOID:
            self._open.append(element)

    def handle_endtag(self, tag):
        while self._open and self._open.pop().tag != tag:
            pass

    def handle_data(self, data):
        for element in self._open:
            element.parts.append(data)

    def by_id(self, element_id: str) -> Element:
        (found,) = [e for e in self.elements if e.attrs.get("id") == element_id]
        return found

    def having(self, css_class: str) -> list[Element]:
        return [e for e in self.elements if css_class in e.classes]

    def rows(self, tbody_id: str) -> list[Element]:
        """The ``tr`` elements inside the table body ``tbody_id``."""
        start = self.elements.index(self.by_id(tbody_id))
        following = self.elements[start + 1 :]
        end = next((i for i, e in enumerate(following) if e.tag in ("tbody", "table", "nav")), len(following))
        return [e for e in following[:end] if e.tag == "tr"]

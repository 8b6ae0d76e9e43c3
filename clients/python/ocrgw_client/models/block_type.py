from enum import StrEnum


class BlockType(StrEnum):
    CAPTION = "caption"
    FIGURE = "figure"
    FORMULA = "formula"
    LIST_ITEM = "list_item"
    PAGE_FOOTER = "page_footer"
    PAGE_HEADER = "page_header"
    SECTION_HEADER = "section_header"
    TABLE = "table"
    TEXT = "text"
    TITLE = "title"

    def __str__(self) -> str:
        return str(self.value)

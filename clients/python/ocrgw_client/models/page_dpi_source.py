from enum import StrEnum


class PageDpiSource(StrEnum):
    ASSUMED = "assumed"
    CONTENT = "content"
    ESTIMATED = "estimated"
    OPTION = "option"
    STATED = "stated"
    VECTOR = "vector"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class GetJobChildren(StrEnum):
    NONE = "none"
    PAGE = "page"

    def __str__(self) -> str:
        return str(self.value)

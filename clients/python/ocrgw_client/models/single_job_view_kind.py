from enum import StrEnum


class SingleJobViewKind(StrEnum):
    CHILD = "child"
    SINGLE = "single"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class ParentViewKind(StrEnum):
    PARENT = "parent"

    def __str__(self) -> str:
        return str(self.value)

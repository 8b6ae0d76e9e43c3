from enum import StrEnum


class ListJobsKind(StrEnum):
    PARENT = "parent"
    SINGLE = "single"

    def __str__(self) -> str:
        return str(self.value)

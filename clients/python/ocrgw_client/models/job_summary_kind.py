from enum import StrEnum


class JobSummaryKind(StrEnum):
    PARENT = "parent"
    SINGLE = "single"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class GetResultPdfResponse202Status(StrEnum):
    BUILDING = "building"

    def __str__(self) -> str:
        return str(self.value)

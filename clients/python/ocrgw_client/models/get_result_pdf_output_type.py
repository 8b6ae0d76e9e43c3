from enum import StrEnum


class GetResultPdfOutputType(StrEnum):
    PDF = "pdf"
    PDFA = "pdfa"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class GetResultPdfResponse409Code(StrEnum):
    NO_RESULT = "no_result"
    PDF_UNAVAILABLE = "pdf_unavailable"
    RESULT_NOT_READY = "result_not_ready"

    def __str__(self) -> str:
        return str(self.value)

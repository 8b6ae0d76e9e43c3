from enum import StrEnum


class GetResultTableCsvResponse409Code(StrEnum):
    NO_RESULT = "no_result"
    RESULT_NOT_READY = "result_not_ready"

    def __str__(self) -> str:
        return str(self.value)

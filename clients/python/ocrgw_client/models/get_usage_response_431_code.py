from enum import StrEnum


class GetUsageResponse431Code(StrEnum):
    REQUEST_HEADER_FIELDS_TOO_LARGE = "request_header_fields_too_large"

    def __str__(self) -> str:
        return str(self.value)

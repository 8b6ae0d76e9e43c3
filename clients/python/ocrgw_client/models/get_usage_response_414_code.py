from enum import StrEnum


class GetUsageResponse414Code(StrEnum):
    URI_TOO_LONG = "uri_too_long"

    def __str__(self) -> str:
        return str(self.value)

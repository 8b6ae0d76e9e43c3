from enum import StrEnum


class GetUsageResponse422Code(StrEnum):
    INVALID_FIELD = "invalid_field"

    def __str__(self) -> str:
        return str(self.value)

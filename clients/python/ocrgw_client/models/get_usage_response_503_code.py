from enum import StrEnum


class GetUsageResponse503Code(StrEnum):
    STORE_UNAVAILABLE = "store_unavailable"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class GetReadinessResponse503Code(StrEnum):
    DRAINING = "draining"
    STORE_UNAVAILABLE = "store_unavailable"

    def __str__(self) -> str:
        return str(self.value)

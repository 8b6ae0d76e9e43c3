from enum import StrEnum


class CreateJobResponse503Code(StrEnum):
    DRAINING = "draining"
    STORE_UNAVAILABLE = "store_unavailable"

    def __str__(self) -> str:
        return str(self.value)

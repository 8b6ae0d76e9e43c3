from enum import StrEnum


class GetUsageResponse400Code(StrEnum):
    HOST_NOT_ALLOWED = "host_not_allowed"

    def __str__(self) -> str:
        return str(self.value)

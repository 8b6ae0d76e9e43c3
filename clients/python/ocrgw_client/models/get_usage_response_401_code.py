from enum import StrEnum


class GetUsageResponse401Code(StrEnum):
    INVALID_API_KEY = "invalid_api_key"
    MISSING_API_KEY = "missing_api_key"

    def __str__(self) -> str:
        return str(self.value)

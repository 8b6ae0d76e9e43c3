from enum import StrEnum


class RetryJobResponse400Code(StrEnum):
    HOST_NOT_ALLOWED = "host_not_allowed"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    MALFORMED_JSON = "malformed_json"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class RetryJobResponse422Code(StrEnum):
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    INVALID_FIELD = "invalid_field"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class RetryJobResponse415Code(StrEnum):
    JSON_CONTENT_TYPE_REQUIRED = "json_content_type_required"

    def __str__(self) -> str:
        return str(self.value)

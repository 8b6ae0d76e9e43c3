from enum import StrEnum


class CreateJobResponse415Code(StrEnum):
    CONTENT_TYPE_MISMATCH = "content_type_mismatch"
    JSON_CONTENT_TYPE_REQUIRED = "json_content_type_required"
    MISSING_CONTENT_TYPE = "missing_content_type"
    UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"

    def __str__(self) -> str:
        return str(self.value)

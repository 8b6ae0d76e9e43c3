from enum import StrEnum


class CreateJobResponse422Code(StrEnum):
    EMPTY_DOCUMENT = "empty_document"
    ENCRYPTED_DOCUMENT = "encrypted_document"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    INVALID_CALLBACK_URL = "invalid_callback_url"
    INVALID_DOCUMENT = "invalid_document"
    INVALID_FIELD = "invalid_field"
    INVALID_OPTIONS = "invalid_options"
    NO_CHILDREN = "no_children"
    TOO_MANY_CHILDREN = "too_many_children"
    TOO_MANY_PAGES = "too_many_pages"
    TOO_MANY_PIXELS = "too_many_pixels"
    UNKNOWN_MODEL = "unknown_model"
    UNSUPPORTED_LANGUAGE = "unsupported_language"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class WebhookErrorCode(StrEnum):
    BAD_RESPONSE = "bad_response"
    CONNECTION_FAILED = "connection_failed"
    HTTP_ERROR = "http_error"
    INTERNAL_ERROR = "internal_error"
    INVALID_CALLBACK_URL = "invalid_callback_url"
    PRIVATE_ADDRESS = "private_address"
    REDIRECT = "redirect"
    TIMEOUT = "timeout"
    UNRESOLVABLE = "unresolvable"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class ErrorCode(StrEnum):
    ADAPTER_ERROR = "adapter_error"
    CHILD_CANCELLED = "child_cancelled"
    CHILD_FAILED = "child_failed"
    ECHO_FAILED = "echo_failed"
    ECHO_TRANSIENT = "echo_transient"
    ENGINE_TIMEOUT = "engine_timeout"
    ENGINE_UNAVAILABLE = "engine_unavailable"
    INVALID_DOCUMENT = "invalid_document"
    INVALID_OPTIONS = "invalid_options"
    LEASE_EXPIRED = "lease_expired"
    ON_PREM_REQUIRED = "on_prem_required"
    RESOURCE_LIMIT = "resource_limit"
    TIMEOUT = "timeout"
    UNKNOWN_MODEL = "unknown_model"
    UNSUPPORTED_LANGUAGE = "unsupported_language"
    UPSTREAM_BAD_RESPONSE = "upstream_bad_response"
    UPSTREAM_FAILED = "upstream_failed"
    UPSTREAM_REJECTED = "upstream_rejected"
    UPSTREAM_TIMEOUT = "upstream_timeout"
    UPSTREAM_UNAVAILABLE = "upstream_unavailable"
    UPSTREAM_UNREACHABLE = "upstream_unreachable"

    def __str__(self) -> str:
        return str(self.value)

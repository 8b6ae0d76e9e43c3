from enum import StrEnum


class SetJobCapResponse400Code(StrEnum):
    HOST_NOT_ALLOWED = "host_not_allowed"
    MALFORMED_JSON = "malformed_json"

    def __str__(self) -> str:
        return str(self.value)

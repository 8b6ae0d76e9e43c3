from enum import StrEnum


class SetJobCapResponse400Code(StrEnum):
    MALFORMED_JSON = "malformed_json"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class GetUsageResponse403Code(StrEnum):
    ADMIN_KEY_REQUIRED = "admin_key_required"

    def __str__(self) -> str:
        return str(self.value)

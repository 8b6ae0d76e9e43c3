from enum import StrEnum


class ModelLocation(StrEnum):
    CLOUD = "cloud"
    ON_PREM = "on_prem"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class SetJobCapResponse403Code(StrEnum):
    ON_PREM_REQUIRED = "on_prem_required"

    def __str__(self) -> str:
        return str(self.value)

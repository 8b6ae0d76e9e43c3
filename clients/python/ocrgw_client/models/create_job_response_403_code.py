from enum import StrEnum


class CreateJobResponse403Code(StrEnum):
    ON_PREM_REQUIRED = "on_prem_required"

    def __str__(self) -> str:
        return str(self.value)

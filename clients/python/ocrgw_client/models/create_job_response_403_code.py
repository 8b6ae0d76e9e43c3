from enum import StrEnum


class CreateJobResponse403Code(StrEnum):
    INTERACTIVE_NOT_ALLOWED = "interactive_not_allowed"
    ON_PREM_REQUIRED = "on_prem_required"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class CreateJobResponse413Code(StrEnum):
    INSPECTION_BUDGET_EXCEEDED = "inspection_budget_exceeded"
    PAYLOAD_TOO_LARGE = "payload_too_large"

    def __str__(self) -> str:
        return str(self.value)

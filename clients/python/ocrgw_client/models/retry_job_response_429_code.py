from enum import StrEnum


class RetryJobResponse429Code(StrEnum):
    INTERACTIVE_LIMIT_REACHED = "interactive_limit_reached"

    def __str__(self) -> str:
        return str(self.value)

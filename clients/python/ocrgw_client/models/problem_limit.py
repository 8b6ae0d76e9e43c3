from enum import StrEnum


class ProblemLimit(StrEnum):
    PROCESS = "process"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)

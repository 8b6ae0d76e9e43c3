from enum import StrEnum


class EventOperation(StrEnum):
    JOB = "job"
    JOB_CHILD = "job_child"
    WEBHOOK = "webhook"

    def __str__(self) -> str:
        return str(self.value)

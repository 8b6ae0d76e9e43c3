from enum import StrEnum


class FanoutWebhookEventsItem(StrEnum):
    CHILD_COMPLETED = "child.completed"
    JOB_COMPLETED = "job.completed"

    def __str__(self) -> str:
        return str(self.value)

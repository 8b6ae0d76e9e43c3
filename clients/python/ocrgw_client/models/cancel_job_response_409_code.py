from enum import StrEnum


class CancelJobResponse409Code(StrEnum):
    JOB_FINISHED = "job_finished"

    def __str__(self) -> str:
        return str(self.value)

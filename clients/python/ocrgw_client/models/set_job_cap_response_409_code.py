from enum import StrEnum


class SetJobCapResponse409Code(StrEnum):
    JOB_FINISHED = "job_finished"
    NOT_A_GROUP = "not_a_group"

    def __str__(self) -> str:
        return str(self.value)

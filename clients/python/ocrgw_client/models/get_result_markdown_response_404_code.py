from enum import StrEnum


class GetResultMarkdownResponse404Code(StrEnum):
    JOB_NOT_FOUND = "job_not_found"

    def __str__(self) -> str:
        return str(self.value)

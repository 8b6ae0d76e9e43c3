from enum import StrEnum


class RetryJobResponse409Code(StrEnum):
    GROUP_NOT_FINISHED = "group_not_finished"
    NOTHING_TO_RETRY = "nothing_to_retry"
    NOT_A_GROUP = "not_a_group"

    def __str__(self) -> str:
        return str(self.value)

from enum import StrEnum


class ListJobEventsResponse400Code(StrEnum):
    HOST_NOT_ALLOWED = "host_not_allowed"
    INVALID_LAST_EVENT_ID = "invalid_last_event_id"

    def __str__(self) -> str:
        return str(self.value)

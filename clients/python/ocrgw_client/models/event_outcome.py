from enum import StrEnum


class EventOutcome(StrEnum):
    DELIVERED = "delivered"
    GIVEN_UP = "given_up"
    RETRYING = "retrying"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)

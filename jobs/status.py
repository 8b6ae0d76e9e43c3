"""Job kinds and statuses: the vocabulary shared by the store, the API and the Lua scripts."""

from enum import Enum


class JobKind(str, Enum):
    SINGLE = "single"
    PARENT = "parent"
    CHILD = "child"


class JobStatus(str, Enum):
    HELD = "held"
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED})
IN_FLIGHT = frozenset({JobStatus.QUEUED, JobStatus.PROCESSING})


class Operation(str, Enum):
    """The ``operation`` of an audit event."""

    JOB = "job"  # a single job or a parent became terminal
    JOB_CHILD = "job_child"  # a child became terminal

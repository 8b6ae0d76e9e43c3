"""The job model and its store: statuses, Redis keys, transition scripts, audit events."""

from jobs.config import Settings
from jobs.status import JobKind, JobStatus
from jobs.store import Claim, Completion, Created, Dispatch, Idempotency, JobStore, NewJob

__all__ = [
    "Claim",
    "Completion",
    "Created",
    "Dispatch",
    "Idempotency",
    "JobKind",
    "JobStatus",
    "JobStore",
    "NewJob",
    "Settings",
]

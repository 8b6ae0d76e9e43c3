"""The job model and its store: the shared vocabulary, Redis keys, transition scripts, audit events."""

from jobs.config import Settings
from jobs.contract import JobKind, JobStatus
from jobs.records import Claim, Completion, Created, Dispatch, Idempotency, NewJob
from jobs.store import JobStore

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

"""The job statuses as the API spells them.

Generated from jobs/contract.py by scripts/generate_statuses.py: do not edit.
"""

HELD = "held"
QUEUED = "queued"
PROCESSING = "processing"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"

#: Every status, in the order of jobs.contract.JobStatus.
STATUSES = (HELD, QUEUED, PROCESSING, COMPLETED, FAILED, CANCELLED)
#: What a single job or a parent can be: it is never held.
ROOT_STATUSES = (QUEUED, PROCESSING, COMPLETED, FAILED, CANCELLED)
#: Where a job ends; a redrive may start a group again.
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
#: Not ended yet: held, waiting for a worker, or running.
ACTIVE = (HELD, QUEUED, PROCESSING)

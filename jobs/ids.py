"""Job ids and call tokens: what they look like, and checking one before it becomes a key."""

import os
import re
import uuid

from jobs.keys import CHILD_SEPARATOR

_JOB_ID = re.compile(rf"[0-9a-f]{{32}}(?:{re.escape(CHILD_SEPARATOR)}[0-9]{{1,6}})?")


def new_job_id() -> str:
    return uuid.uuid4().hex


def is_job_id(job_id: str) -> bool:
    """A root id (32 hex digits) or a child id (``<root>-<index>``); anything else never reaches a key."""
    return _JOB_ID.fullmatch(job_id) is not None


def call_token() -> str:
    """Names one call of a transition.  The client resends a call whose reply
    a dropped connection lost with the same arguments, token included, and
    the script answers that repeat as it answered the first time."""
    return os.urandom(8).hex()

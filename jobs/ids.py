"""Job ids and call tokens: what they look like, and checking one before it becomes a key."""

import hashlib
import os
import re
import secrets

from jobs.keys import BUCKET_DIGITS, BUCKET_SPACE, CHILD_SEPARATOR, TENANT_TAG_LENGTH

_JOB_ID = re.compile(rf"[0-9a-f]{{32}}(?:{re.escape(CHILD_SEPARATOR)}[0-9]{{1,6}})?")
_TENANT = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}")


DEFAULT_TENANT = "default"
# A root id is its tenant's tag (TENANT_TAG_LENGTH digits) and 80 random bits, 32 hex
# digits in all: every key of a job, and the tenant's own indexes, derive from the id alone.
# The first BUCKET_DIGITS random digits, modulo the bucket count, are its bucket (jobs.keys.Keyspace.bucket_of).


def tenant_tag(tenant: str) -> str:
    """The first digits of every root id of ``tenant``'s jobs."""
    return hashlib.sha256(tenant.encode()).hexdigest()[:TENANT_TAG_LENGTH]


def is_tenant(name: str) -> bool:
    """A tenant's name: lower-case letters, digits, ``_ . -``, at most 63 characters, no separator first."""
    return _TENANT.fullmatch(name) is not None


def new_job_id(tenant: str = DEFAULT_TENANT, bucket: int | None = None, bucket_count: int | None = None) -> str:
    """A new root id of ``tenant``'s; in ``bucket`` of ``bucket_count`` when given (that of the
    Idempotency-Key it is created with), else in a random one."""
    if bucket is None:
        return tenant_tag(tenant) + os.urandom(10).hex()
    if bucket_count is None:
        raise ValueError("a root id is made in a bucket of a given bucket count")
    count = bucket_count
    # Uniform over the values of the digits that are this bucket's (those below BUCKET_SPACE).
    digits = bucket + count * secrets.randbelow((BUCKET_SPACE - 1 - bucket) // count + 1)
    return f"{tenant_tag(tenant)}{digits:0{BUCKET_DIGITS}x}{os.urandom(8).hex()}"


def is_job_id(job_id: str) -> bool:
    """A root id (32 hex digits) or a child id (``<root>-<index>``); anything else never reaches a key."""
    return _JOB_ID.fullmatch(job_id) is not None


def call_token() -> str:
    """Names one call of a transition.  The client resends a call whose reply
    a dropped connection lost with the same arguments, token included, and
    the script answers that repeat as it answered the first time."""
    return os.urandom(8).hex()

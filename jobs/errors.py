"""The one error hierarchy of ocrgw.

Every error a caller may want to handle carries a stable ``code``: the gateway
puts it in the RFC 9457 problem, the worker stores it as the job's
``error_code``.  Codes are part of the API and never change meaning.  A job's
codes, and whether each is retried, are the catalogue ``jobs.contract.ErrorCode``.
"""

from jobs.contract import ErrorCode


class OcrgwError(Exception):
    """Base of every error raised on purpose by ocrgw."""

    code = "ocrgw_error"

    def __init__(self, message: str = "", *, code: str | None = None):
        super().__init__(message or self.__class__.__doc__ or self.code)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self)


# --- store -------------------------------------------------------------------


class StoreError(OcrgwError):
    """Raised when a transition script answers with an unexpected code."""

    code = "store_error"


class JobNotFound(StoreError):
    """Raised when a job id names no job."""

    code = "job_not_found"


class IdempotencyKeyReused(StoreError):
    """Raised when an Idempotency-Key comes back with a different request body."""

    code = "idempotency_key_reused"


class InteractiveLaneFull(StoreError):
    """Raised when a tenant's interactive jobs queued or processing leave no room for one more submission."""

    code = "interactive_limit_reached"

    def __init__(self, in_use: int, limit: int):
        super().__init__(f"the tenant has {in_use} interactive jobs queued or processing; its key allows {limit}")
        self.in_use, self.limit = in_use, limit


class LeaseLost(StoreError):
    """Raised when an attempt reports on a job that another attempt now holds."""

    code = "lease_lost"


class NotProcessing(StoreError):
    """Raised when an attempt reports on a job that is no longer processing."""

    code = "not_processing"


class CancelRequested(StoreError):
    """Raised to the attempt holding a job once a client asked to cancel it: stop, and end it cancelled."""

    code = "cancel_requested"


class JobFinished(StoreError):
    """Raised when a control asks to change a job that is already terminal (cancel, a new cap)."""

    code = "job_finished"


class NotAGroup(StoreError):
    """Raised when a group's control (a new cap, a redrive) names a single job or a child."""

    code = "not_a_group"


class GroupNotFinished(StoreError):
    """Raised when a redrive names a parent that is still running."""

    code = "group_not_finished"


class NothingToRetry(StoreError):
    """Raised when a redrive finds no failed (or cancelled, if asked) child to send again."""

    code = "nothing_to_retry"


# --- documents and engines ---------------------------------------------------


class AdapterError(OcrgwError):
    """Raised when an OCR adapter cannot produce a result.

    Its ``code`` is one of the catalogue's, which says whether another
    attempt may succeed (an engine crash or a timeout: ``transient``) or not
    (the document itself is bad).
    """

    code: ErrorCode = ErrorCode.ADAPTER_ERROR

    def __init__(self, message: str = "", *, code: ErrorCode | None = None):
        super().__init__(message, code=code)

    @property
    def transient(self) -> bool:
        return self.code.retried


class InvalidDocument(AdapterError):
    """Raised when a document cannot be decoded or rendered (corrupt, empty, wrong type)."""

    code = ErrorCode.INVALID_DOCUMENT


class EncryptedDocument(InvalidDocument):
    """Raised when a PDF needs a password to open: nothing in it can be read until its encryption is removed.

    A job that meets one fails as ``invalid_document``; the gateway refuses one at submission with a
    problem of its own (``encrypted_document``).
    """

    def __init__(self, message: str = ""):
        super().__init__(message or ENCRYPTED_MESSAGE)


#: What to do about an ``EncryptedDocument``: OCR reads a PDF it can open, and one with a user password it cannot.
ENCRYPTED_MESSAGE = (
    "the PDF is encrypted: it needs a password to open; remove the encryption first "
    "(for example qpdf --decrypt --password=PASSWORD in.pdf out.pdf) and send it again"
)


class EngineUnavailable(AdapterError):
    """Raised when an OCR engine cannot be loaded or started on this host."""

    code = ErrorCode.ENGINE_UNAVAILABLE


class EchoFailed(AdapterError):
    """Raised by the echo adapter when asked to fail (``options.fail``)."""

    code = ErrorCode.ECHO_FAILED


# --- replication ---------------------------------------------------------------


class NotReplicated(StoreError):
    """Raised when a creation did not reach OCRGW_MIN_REPLICAS replicas in OCRGW_REPLICA_WAIT_MS."""

    code = "store_unavailable"

"""The entry of ``record_pdf``: its spec and its call (``record_pdf.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class RecordPdfReply:
    code: Reply  # OK; NO_JOB when the job is gone; WRONG_STATUS when not the ending the build read
    status: str  # the job's status, when refused


RECORD_PDF = Transition(
    "record_pdf",
    keys=("job", "pdf", "asked"),
    args=(Arg("finished_at"), Arg("pdf_field"), Arg("failure_field"), Arg("pdf", "bytes"), Arg("error")),
    reply=RecordPdfReply,
)


def call(ctx: StoreContext, job_id: str, finished_at: str, pdf: bytes, error: str, variant: str) -> RecordPdfReply:
    """Keeps a variant of the job's searchable PDF (or why none could be built) for its ending at
    ``finished_at``."""
    pdf_field, failure_field = keys.pdf_fields(variant)
    return ctx.run(
        RECORD_PDF,
        {
            "job": ctx.keyspace.job(job_id),
            "pdf": ctx.keyspace.pdf(job_id),
            "asked": ctx.keyspace.pdf_asked(job_id, variant),
        },
        {
            "finished_at": finished_at,
            "pdf_field": pdf_field,
            "failure_field": failure_field,
            "pdf": pdf,
            "error": error,
        },
    )

"""The spec of ``record_pdf.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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

"""record_pdf: a terminal job's searchable PDF is kept for its ending only, and goes with the job."""

from __future__ import annotations

from dataclasses import replace

from jobs import keys
from jobs.queries import StoredPdf

RESULT = {"text": "", "pages": []}


def finished(kit) -> tuple[str, str]:
    job_id = kit.single().job_id
    kit.store.complete(job_id, kit.claim(job_id).attempt, RESULT)
    return job_id, kit.store.queries.get(job_id)["finished_at"]


def test_a_terminal_jobs_pdf_is_kept_and_its_build_mark_goes(kit):
    job_id, ending = finished(kit)
    assert kit.store.ask_pdf(job_id, 60) and not kit.store.ask_pdf(job_id, 60)

    assert kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 built")

    stored = kit.store.queries.stored_pdf(job_id)
    assert stored is not None and (stored.pdf, stored.error) == (b"%PDF-1.7 built", None)
    assert not kit.r.exists(keys.pdf_asked(job_id))


def test_a_failed_build_is_kept_as_its_reason(kit):
    job_id, ending = finished(kit)

    assert kit.store.record_pdf(job_id, ending, error="cannot read page 2")

    assert kit.store.queries.stored_pdf(job_id) == StoredPdf(None, "cannot read page 2")


def test_nothing_is_kept_for_a_job_not_terminal_gone_or_ended_otherwise(kit):
    running = kit.single().job_id
    kit.claim(running)
    job_id, ending = finished(kit)

    assert not kit.store.record_pdf(running, "", pdf=b"%PDF-")
    assert not kit.store.record_pdf(job_id, str(int(ending) + 1), pdf=b"%PDF-")
    assert not kit.store.record_pdf("0" * 32, "", pdf=b"%PDF-")
    assert kit.store.queries.stored_pdf(running) is None and kit.store.queries.stored_pdf(job_id) is None


def test_the_pdf_expires_with_its_job(kit):
    job_id, ending = finished(kit)
    kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 built")
    kit.store.settings = replace(kit.store.settings, result_ttl=0)

    assert kit.store.expire([job_id]) == 1

    assert not kit.r.exists(keys.pdf(job_id))

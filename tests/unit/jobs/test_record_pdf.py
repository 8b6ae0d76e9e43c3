"""record_pdf: a terminal job's searchable PDF is kept for its ending only, and goes with the job."""

from __future__ import annotations

from dataclasses import replace

from jobs import controls
from jobs.pdf_outputs import ALL_OUTPUTS
from jobs.queries import StoredPdf
from tests.keyspace import keys

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


def test_each_variant_is_kept_and_asked_for_on_its_own(kit):
    job_id, ending = finished(kit)
    assert kit.store.ask_pdf(job_id, 60) and kit.store.ask_pdf(job_id, 60, variant="pdfa-o2")
    assert not kit.store.ask_pdf(job_id, 60, variant="pdfa-o2")

    assert kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 PDF/A", variant="pdfa-o2")

    assert kit.store.queries.stored_pdf(job_id, "pdfa-o2") == StoredPdf(b"%PDF-1.7 PDF/A", None)
    assert kit.store.queries.stored_pdf(job_id) is None  # the plain PDF is still to be built
    assert not kit.r.exists(keys.pdf_asked(job_id, "pdfa-o2")) and kit.r.exists(keys.pdf_asked(job_id))


def test_a_variants_failure_leaves_the_others_and_a_later_build_replaces_it(kit):
    job_id, ending = finished(kit)
    kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 plain")
    kit.store.record_pdf(job_id, ending, error="a font is not embedded", variant="pdfa")

    assert kit.store.queries.stored_pdf(job_id, "pdfa") == StoredPdf(None, "a font is not embedded")
    assert kit.store.queries.stored_pdf(job_id) == StoredPdf(b"%PDF-1.7 plain", None)

    kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 PDF/A", variant="pdfa")
    assert kit.store.queries.stored_pdf(job_id, "pdfa") == StoredPdf(b"%PDF-1.7 PDF/A", None)


def test_every_variant_and_every_mark_expire_with_their_job(kit):
    job_id, ending = finished(kit)
    for variant in ALL_OUTPUTS:
        kit.store.ask_pdf(job_id, 600, variant=variant.name)
    kit.store.record_pdf(job_id, ending, pdf=b"%PDF-1.7 PDF/A", variant="pdfa-o1")
    kit.store.settings = replace(kit.store.settings, result_ttl=0)

    assert kit.store.expire([job_id]) == 1

    assert not kit.r.exists(keys.pdf(job_id))
    assert not any(kit.r.exists(keys.pdf_asked(job_id, variant.name)) for variant in ALL_OUTPUTS)


def test_a_redrive_drops_every_variant_and_every_mark_of_the_parent(kit):
    parent = kit.group(2, max_parallel=2).job_id
    for index, child_id in enumerate(kit.child_ids(parent, 2)):
        claim = kit.claim(child_id)
        if index:
            kit.store.fail(child_id, claim.attempt, "echo_failed", "asked to")
        else:
            kit.store.complete(child_id, claim.attempt, RESULT)
    ending = kit.store.queries.get(parent)["finished_at"]
    kit.store.record_pdf(parent, ending, pdf=b"%PDF-1.7 plain")
    kit.store.record_pdf(parent, ending, pdf=b"%PDF-1.7 PDF/A", variant="pdfa")
    for variant in ALL_OUTPUTS:
        kit.store.ask_pdf(parent, 600, variant=variant.name)

    controls.redrive(kit.store, parent)

    assert not kit.r.exists(keys.pdf(parent))
    assert not any(kit.r.exists(keys.pdf_asked(parent, variant.name)) for variant in ALL_OUTPUTS)

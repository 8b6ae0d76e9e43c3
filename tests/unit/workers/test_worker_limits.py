"""A worker on the worst inputs: each fails its job with a clear code, and the process serves the next job.

Memory: a ``MemoryError`` (the pool process's address-space limit) fails the
job ``resource_limit`` and is never retried; a decoder that aborts in the
child reading a page fails it ``invalid_document``.  The process limits:
``RLIMIT_AS`` and a temporary directory of its own, cleaned of dead processes'.
"""

from __future__ import annotations

import os
import resource
import tempfile

import pytest

from documents import pages
from documents.isolation import run_isolated
from documents.limits import TooManyPages
from jobs.contract import ErrorCode
from jobs.errors import AdapterError, InvalidDocument
from tests import bad_documents as bad
from tests.pdfs import pdf
from tests.scans import scanned_pdf
from tests.unit.workers.pages import HELLO_PNG
from tests.unit.workers.runner_support import make
from workers import process_limits
from workers.adapters import base, tesseract
from workers.adapters.base import PageResult
from workers.adapters.echo import EchoAdapter
from workers.adapters.paddleocr import PaddleOcrAdapter
from workers.adapters.tesseract import TesseractAdapter

# -- the runner ------------------------------------------------------------------------------------


def test_running_out_of_memory_fails_the_job_at_once_and_the_next_job_runs(monkeypatch):
    # No kept slot: the next job comes through its own task, whatever the time the first one took.
    h = make(monkeypatch, keep_slot_seconds=0.0)
    hungry, next_job = h.single(b"hungry"), h.single(b"fine")

    def behaviour(document, options, on_page):
        if document == b"hungry":
            raise MemoryError
        return document.decode()

    h.adapter.behaviour = behaviour

    assert h.runner.run(hungry) == "failed"
    assert h.runner.run(next_job) == "completed"

    job = h.job(hungry)
    assert (job["status"], job["attempts"], job["error_code"]) == ("failed", "1", ErrorCode.RESOURCE_LIMIT)
    assert "memory" in job["error"]
    assert h.queued_deadline(hungry) is None  # not retried
    result = h.store.queries.result(next_job)
    assert result is not None and result["text"] == "fine"


# -- the adapters ----------------------------------------------------------------------------------


def test_paddleocr_lets_a_memory_error_through_instead_of_retrying_it(monkeypatch):
    adapter = PaddleOcrAdapter()

    def exhaust(_pixels, **_options):
        raise MemoryError

    monkeypatch.setattr(adapter, "_engine", exhaust)
    with pytest.raises(MemoryError):
        adapter.run(HELLO_PNG, "image/png", {})


@pytest.mark.parametrize("headroom_mb", [60, 115, 200, 300])
def test_a_page_tesseract_cannot_read_under_the_limit_is_a_permanent_resource_limit_and_the_next_page_reads(
    headroom_mb,
):
    """A 33 Mpx page under a limit some MiB above what the process holds: refused before Tesseract starts.

    115 MiB is where Tesseract, left to fail an allocation, ended this process with SIGSEGV.
    """
    outcome, next_text = run_isolated(_read_big_page_then_a_small_one, headroom_mb << 20)

    assert outcome == ErrorCode.RESOURCE_LIMIT
    assert "HELLO" in next_text


@pytest.mark.parametrize("headroom_mb", [10, 30, 60, 70, 78])
def test_an_allocation_that_fails_inside_tesseract_fails_the_page_resource_limit_never_a_piece_of_it(
    monkeypatch, headroom_mb
):
    """Past the check (weighed at nothing here), Leptonica's failed allocations are heard, not left to stderr."""
    monkeypatch.setattr(tesseract, "PAGE_BYTES_PER_PIXEL", 0)
    monkeypatch.setattr(tesseract, "ENGINE_BYTES", 0)

    outcome, next_text = run_isolated(_read_big_page_then_a_small_one, headroom_mb << 20, True)

    assert outcome in (ErrorCode.RESOURCE_LIMIT, "whole")
    assert "HELLO" in next_text


def _read_big_page_then_a_small_one(headroom: int, preload: bool = False) -> tuple[str, str]:
    page = pages.open_document(scanned_pdf([4]), "application/pdf")
    with page as doc:
        small = doc.page(0).convert("L")
    big = small.resize((small.width * 3, small.height * 3))
    big.info["dpi"] = (600, 600)
    adapter = TesseractAdapter()
    whole = adapter.recognise(1, big, {}, None) if preload else None
    limit = _current_address_space() + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))  # soft: lifted after the page
    try:
        result = adapter.recognise(1, big, {}, None)
        outcome = "whole" if result == whole else f"{len(result.lines)} lines"
    except AdapterError as error:
        assert error.transient is False
        outcome = error.code
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return outcome, adapter.run(HELLO_PNG, "image/png", {}).text


def test_echo_refuses_a_text_of_more_pages_than_allowed_before_making_them():
    with pytest.raises(TooManyPages):
        EchoAdapter(allow_crash=False).run(b"\f" * 20_000, "text/plain", {})


class Blank(TesseractAdapter):
    """Tesseract's page reading, with a recogniser that reads nothing: the pages are what is tested."""

    name = "blank"

    def recognise(self, page, image, options, deadline):
        return PageResult(page=page, text="", lines=[])


def test_a_page_whose_decoder_aborts_fails_the_job_and_the_adapter_reads_the_next_document(monkeypatch):
    adapter = Blank()

    def abort(self, index):
        os.abort()

    monkeypatch.setattr(pages._PdfDocument, "page", abort)
    with pytest.raises(InvalidDocument, match=r"page 1 ended the process reading it \(SIGABRT\)"):
        adapter.run(bad.real_pdf(), "application/pdf", {})
    monkeypatch.undo()

    assert len(adapter.run(bad.real_pdf(2), "application/pdf", {}).pages) == 2


def test_a_twice_deflated_content_stream_bomb_fails_its_job_under_the_memory_limit():
    """PDFium inflates it to 1 GiB and aborts on the failed allocation past the limit: in the page's child."""

    def run_under_limit():
        limit = _current_address_space() + (768 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        adapter = Blank()
        try:
            adapter.run(bad.pdf_flate_bomb(), "application/pdf", {})
            outcome = "completed"
        except InvalidDocument as error:
            outcome = str(error)
        return outcome, len(adapter.run(bad.real_pdf(), "application/pdf", {}).pages)

    outcome, next_pages = run_isolated(run_under_limit)

    assert "page 1 ended the process reading it" in outcome
    assert next_pages == 1


def test_a_pdf_that_costs_gigabytes_to_open_fails_its_job_before_this_process_opens_it():
    def run_here():
        adapter = Blank()
        start_kib = _reset_peak_resident_kib()  # a fork inherits its parent's peak
        try:
            adapter.run(bad.pdf_object_stream_bomb(), "application/pdf", {})
            outcome = "completed"
        except InvalidDocument as error:
            outcome = str(error)
        grown_kib = _status_kib("VmHWM") - start_kib
        return outcome, grown_kib, len(adapter.run(bad.real_pdf(), "application/pdf", {}).pages)

    outcome, grown_kib, next_pages = run_isolated(run_here)

    assert outcome.startswith("opening the PDF ended the process reading it")
    assert grown_kib < 256 * 1024  # this process never held the gigabyte
    assert next_pages == 1


def _reset_peak_resident_kib() -> int:
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # the peak resident size starts again from the current one
    return _status_kib("VmHWM")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(f"{field}:"))


def _current_address_space() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


# -- the pool process's limits -----------------------------------------------------------------


def test_a_pool_process_gets_its_address_space_limit_and_a_temporary_directory_of_its_own(tmp_path):
    def limited():
        directory = process_limits.apply(2048, str(tmp_path))
        return resource.getrlimit(resource.RLIMIT_AS), str(directory), tempfile.gettempdir(), os.environ["TMPDIR"]

    limit, directory, tempdir, tmpdir_env = run_isolated(limited)

    assert limit == (2048 << 20, 2048 << 20)
    assert directory == tempdir == tmpdir_env
    assert directory.startswith(str(tmp_path / process_limits.TMP_SUBDIRECTORY))


def test_no_limit_is_set_with_0_and_a_lower_one_already_set_is_kept(tmp_path):
    def limits(first_mb):
        def apply():
            if first_mb:
                resource.setrlimit(resource.RLIMIT_AS, (first_mb << 20, first_mb << 20))
            process_limits.apply(0, str(tmp_path))
            unlimited = resource.getrlimit(resource.RLIMIT_AS)
            process_limits.apply(4096, str(tmp_path))
            return unlimited, resource.getrlimit(resource.RLIMIT_AS)

        return run_isolated(apply)

    unlimited, after = limits(0)
    assert unlimited == (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    assert after == (4096 << 20, 4096 << 20)
    assert limits(1024)[1] == (1024 << 20, 1024 << 20)


def test_the_directories_of_dead_processes_are_removed_and_the_living_ones_kept(tmp_path):
    root = tmp_path / process_limits.TMP_SUBDIRECTORY
    dead_pid = run_isolated(os.getpid)  # reaped: no process has this pid now
    for pid in (dead_pid, os.getpid()):
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "tess_page.png").write_bytes(b"x" * 1000)
    (root / "not-a-pid").mkdir()

    made = run_isolated(lambda: process_limits.apply(0, str(tmp_path)).name)

    assert sorted(p.name for p in root.iterdir()) == sorted([str(os.getpid()), made, "not-a-pid"])
    assert (root / str(os.getpid()) / "tess_page.png").exists()


def test_text_layers_are_read_in_one_child_and_each_page_to_draw_in_its_own(monkeypatch):
    children = []

    def counted(function, *args, what):
        children.append(what)
        return run_isolated(function, *args, what=what)

    monkeypatch.setattr(base, "run_isolated", counted)
    document = pdf([("text", "one"), ("image", "TWO"), ("text", "three"), ("image", "FOUR")])

    result = Blank().run(document, "application/pdf", {"text_layer": "prefer"})

    assert [page.source for page in result.pages] == ["text_layer", "ocr", "text_layer", "ocr"]
    assert children == ["reading the text layers", "page 2", "page 4"]

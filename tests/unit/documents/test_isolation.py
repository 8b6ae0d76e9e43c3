"""A page read in a forked child: its answer comes back, its death does not take the caller with it."""

from __future__ import annotations

import ctypes
import hashlib
import os
import resource
import signal
import time

import pytest

from documents.isolation import IsolatedCalls, OutOfTime, run_isolated
from documents.limits import TooManyPixels
from documents.pages import open_document
from jobs.errors import InvalidDocument
from tests import bad_documents as bad


def test_the_child_s_value_comes_back():
    assert run_isolated(lambda a, b: {"sum": a + b, "pid": os.getpid()}, 2, 3)["sum"] == 5
    assert run_isolated(os.getpid) != os.getpid()


def test_a_page_image_comes_back_whole():
    with open_document(bad.real_pdf(2), "application/pdf") as document:
        image = run_isolated(document.page, 1)

    assert (image.mode, image.size) == ("RGB", (200, 100))
    assert image.getpixel((100, 50)) == (255, 255, 255)


def test_the_child_s_exception_is_raised_here_with_its_type_and_fields():
    def refuse():
        raise TooManyPixels(2, 100, 200, 50)

    with pytest.raises(TooManyPixels) as raised:
        run_isolated(refuse)

    assert (raised.value.page, raised.value.width, raised.value.height, raised.value.max_pixels) == (2, 100, 200, 50)


def test_an_exception_that_cannot_travel_comes_back_as_an_invalid_document():
    class Odd(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a}/{b}")

    def fail():
        raise Odd(1, 2)

    with pytest.raises(InvalidDocument, match="Odd: 1/2"):
        run_isolated(fail)


def test_running_out_of_memory_in_the_child_is_a_memory_error_here():
    def allocate_too_much():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        return bytearray(2 << 30)

    with pytest.raises(MemoryError):
        run_isolated(allocate_too_much)


@pytest.mark.parametrize("how", [signal.SIGABRT, signal.SIGSEGV, signal.SIGKILL])
def test_a_child_that_dies_is_an_invalid_document_and_the_caller_goes_on(how):
    def die():
        os.kill(os.getpid(), how)

    with pytest.raises(InvalidDocument, match=f"page 4 ended the process reading it \\({how.name}\\)"):
        run_isolated(die, what="page 4")
    assert run_isolated(lambda: "next") == "next"


def test_a_child_that_exits_without_answering_is_an_invalid_document():
    with pytest.raises(InvalidDocument, match="exit status 7"):
        run_isolated(lambda: os._exit(7))


def test_a_caller_stopped_while_waiting_takes_its_child_down(tmp_path):
    pid_file = tmp_path / "child.pid"

    class Stop(Exception):
        pass

    def write_pid_and_wait():
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)

    def stop(*_):
        if not (pid_file.exists() and pid_file.read_text()):  # the child has not run yet on a slow machine
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        raise Stop

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(Stop):
            run_isolated(write_pid_and_wait)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    child = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(child, 0)


def test_a_crashing_child_dumps_no_core():
    def dump_settings():
        libc = ctypes.CDLL(None)
        return resource.getrlimit(resource.RLIMIT_CORE), libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE

    assert run_isolated(dump_settings) == ((0, 0), 0)


# -- many calls, one child -------------------------------------------------------------------------


def _pid_and_sum(a: int, b: int) -> tuple[int, int]:
    return os.getpid(), a + b


def _refuse(page: int) -> None:
    raise TooManyPixels(page, 100, 200, 50)


def _die_or_answer(how: int) -> int:
    if how:
        os.kill(os.getpid(), how)
    return os.getpid()


def _sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _lower_then_report(lower: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    if lower:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (1 << 40, hard))
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (1000, hard))
    return resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CPU)


def test_isolated_calls_run_one_after_another_in_one_child():
    with IsolatedCalls(_pid_and_sum) as calls:
        answers = [calls.call(n, 1) for n in range(50)]

    assert [total for _, total in answers] == list(range(1, 51))
    assert {pid for pid, _ in answers} != {os.getpid()}
    assert len({pid for pid, _ in answers}) == 1 and calls.forks == 1


def _digest(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def test_a_large_argument_reaches_the_child_whole_with_the_fork_and_through_the_pipe():
    documents = [os.urandom(24 << 20), os.urandom(24 << 20) + b"tail"]

    with IsolatedCalls(_digest) as calls:
        assert [calls.call(data) for data in documents] == [_digest(data) for data in documents]

    assert calls.forks == 1


def test_an_isolated_call_s_exception_comes_back_and_the_child_goes_on():
    with IsolatedCalls(_refuse) as calls:
        for page in (1, 2):
            with pytest.raises(TooManyPixels) as raised:
                calls.call(page)
            assert raised.value.page == page

    assert calls.forks == 1


@pytest.mark.parametrize("how", [signal.SIGABRT, signal.SIGKILL])
def test_a_child_that_dies_in_a_call_is_an_invalid_document_and_the_next_call_gets_a_fresh_child(how):
    with IsolatedCalls(_die_or_answer, what="opening the PDF") as calls:
        first = calls.call(0)
        with pytest.raises(InvalidDocument, match=f"opening the PDF ended the process reading it \\({how.name}\\)"):
            calls.call(how)
        assert calls.call(0) not in (first, os.getpid())

    assert calls.forks == 2


def test_a_call_past_its_deadline_is_out_of_time_and_its_child_is_killed():
    with IsolatedCalls(_sleep) as calls:
        first = calls.call(0)
        with pytest.raises(OutOfTime):
            calls.call(60, timeout=0.2)
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(first, 0)
        assert calls.call(0) != first

    assert calls.forks == 2


def test_each_call_starts_under_the_limits_the_child_started_with():
    with IsolatedCalls(_lower_then_report) as calls:
        started_under = calls.call(False)
        calls.call(True)
        assert calls.call(False) == started_under


def test_closing_isolated_calls_ends_their_child():
    calls = IsolatedCalls(_sleep)
    child = calls.call(0)
    calls.close()

    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_a_deadline_holds_when_the_pipe_s_descriptor_is_past_1024():
    # A gateway serving many connections has descriptors past select()'s FD_SETSIZE.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    assert hard == resource.RLIM_INFINITY or hard >= wanted, "the test needs more open files than allowed"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with IsolatedCalls(_sleep) as calls:
            assert calls.call(0, timeout=60) != os.getpid()
            assert calls._from_child > 1024
            with pytest.raises(OutOfTime):
                calls.call(60, timeout=0.2)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

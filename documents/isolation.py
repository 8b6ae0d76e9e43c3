"""Run a decoder in a forked child, so that whatever it does to its process, the caller's lives on.

Limits from headers (``documents.limits``) keep a page image within bounds,
but what PDFium allocates while it parses a page is not announced anywhere:
a content stream deflated twice inflates to a gigabyte (PDFium's cap per
filter) and costs it three; millions of drawing operators cost more.  PDFium
answers a failed allocation by aborting the process.  So a worker draws
each page in a child forked for it: the child inherits the document already
opened (copy-on-write, no re-parse) and the process's address-space limit,
and sends back the page image (or the exception it raised) through a pipe.
If the child dies instead (an abort, a segfault, the OOM killer), the page
is an ``InvalidDocument`` and the worker goes on with its next job.

A caller with many small calls of one function (the gateway opening each
PDF of a group) would spend more on forks than on the calls: a fork costs
more the more memory its parent holds.  ``IsolatedCalls`` forks one child
for them all, at the first call, whose arguments it inherits, and sends it
the arguments of each later call through a pipe; each call
starts under the resource limits the child started with (what a call
lowers for itself is put back), may be given a deadline, after which the
child is killed and ``OutOfTime`` raised, and a child that dies is replaced
by a fresh fork for the next call.

The child dies with its parent (``PR_SET_PDEATHSIG``), and the parent kills
it when it stops waiting early (the job's time limit), so no child outlives
its page; it dumps no core, so its crashes cost no disk.  Linux only, like
the rest of the workers' process handling.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import math
import os
import pickle
import resource
import select
import signal
import time
from collections.abc import Callable
from typing import Any, TypeVar

from jobs.errors import InvalidDocument, OcrgwError

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_READ_CHUNK = 1 << 20
_LENGTH_BYTES = 8  # each message through an ``IsolatedCalls`` pipe: its length, then its pickle
_RESTORED_LIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU)
_libc: Any = None


class OutOfTime(OcrgwError):
    """Raised when an isolated call has not answered by its deadline; its child has been killed."""

    code = "out_of_time"


def run_isolated(function: Callable[..., T], *args: Any, what: str = "reading the document") -> T:
    """``function(*args)`` as run in a forked child: its value, or the exception it raised, raised here.

    A child that ends without an answer raises ``InvalidDocument`` naming ``what``.
    """
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _serve(write_end, parent, function, args)
    os.close(write_end)
    answer = bytearray()
    try:
        while chunk := os.read(read_end, _READ_CHUNK):
            answer += chunk
    except BaseException:
        # Stopped early (the job's time limit strikes as an exception here): the child goes too.
        _kill(pid)
        raise
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if answer and os.WIFEXITED(status) and os.WEXITSTATUS(status) in (0, 1):
        succeeded, value = pickle.loads(answer)
        if succeeded:
            return value
        raise value
    raise InvalidDocument(f"{what} ended the process reading it ({_how(status)}): {_WHY}")


_WHY = "the document needs more memory or time than it may take, or is malformed"


class IsolatedCalls:
    """Calls of ``function``, each as run in a child forked once for them all (forked again if it dies).

    Use it as a context manager, or ``close`` it: the child lives until then.
    """

    def __init__(self, function: Callable[..., Any], *, what: str = "reading the document"):
        self.function, self.what = function, what
        self.forks = 0  # how many children were forked, for those who count what a fork costs
        self._pid: int | None = None
        self._to_child = self._from_child = -1

    def __enter__(self) -> IsolatedCalls:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, *args: Any, timeout: float | None = None) -> Any:
        """``function(*args)`` in the child: its value, or its exception raised here.

        ``OutOfTime`` when it has not answered within ``timeout`` seconds; ``InvalidDocument``
        naming ``what`` when the child ended without an answer.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            if self._pid is None:
                # The first call's arguments go with the fork, shared, not copied: a request with one
                # document (most are) costs what ``run_isolated`` would.
                self._fork(args)
                answer = self._answer(deadline)
            else:
                try:
                    _write_message(self._to_child, pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL))
                except BrokenPipeError:  # the child ended between calls; its status says how
                    answer = None
                else:
                    answer = self._answer(deadline)
        except BaseException:
            self.close()  # out of time, or stopped while waiting (a time limit, an interrupt): the child goes too
            raise
        if answer is None:
            status = self._reap()
            raise InvalidDocument(f"{self.what} ended the process reading it ({_how(status)}): {_WHY}")
        succeeded, value = pickle.loads(answer)
        if succeeded:
            return value
        raise value

    def close(self) -> None:
        if self._pid is not None:
            _kill(self._pid)
            self._pid = None
            self._close_pipes()

    def _fork(self, first_call: tuple) -> None:
        to_child_read, to_child_write = os.pipe()
        from_child_read, from_child_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(to_child_write)
            os.close(from_child_read)
            _serve_calls(to_child_read, from_child_write, parent, self.function, first_call)
        os.close(to_child_read)
        os.close(from_child_write)
        self._pid, self._to_child, self._from_child = pid, to_child_write, from_child_read
        self.forks += 1

    def _answer(self, deadline: float | None) -> bytes | None:
        """The child's answer, None if it ended first; ``OutOfTime`` past ``deadline``."""
        received = bytearray()
        wanted = _LENGTH_BYTES
        length_known = False
        readable = select.poll()  # not select(): a gateway serving many connections has descriptors past 1024
        readable.register(self._from_child, select.POLLIN)
        while len(received) < wanted:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not readable.poll(math.ceil(left * 1000)):
                    raise OutOfTime(f"{self.what} took longer than it may")
            chunk = os.read(self._from_child, max(wanted - len(received), 1))
            if not chunk:
                return None
            received += chunk
            if not length_known and len(received) >= _LENGTH_BYTES:
                wanted = _LENGTH_BYTES + int.from_bytes(received[:_LENGTH_BYTES], "big")
                length_known = True
        return bytes(received[_LENGTH_BYTES:])

    def _reap(self) -> int:
        assert self._pid is not None
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        self._close_pipes()
        return status

    def _close_pipes(self) -> None:
        for end in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(end)
        self._to_child = self._from_child = -1


def _write_message(fd: int, message: bytes) -> None:
    for part in (len(message).to_bytes(_LENGTH_BYTES, "big"), message):
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytearray | None:
    received = bytearray(size)
    view, filled = memoryview(received), 0
    while filled < size:
        count = os.readv(fd, [view[filled : filled + _READ_CHUNK]])
        if not count:
            return None
        filled += count
    return received


def _serve_calls(read_end: int, write_end: int, parent: int, function: Callable[..., Any], first_call: tuple) -> None:
    """Answers ``first_call``, then each call read from ``read_end``, until the parent closes it."""
    status = 0
    try:
        _become_disposable(parent)
        started_under = {limit: resource.getrlimit(limit) for limit in _RESTORED_LIMITS}
        args: tuple | None = first_call
        while args is not None:
            try:
                answer = pickle.dumps((True, function(*args)), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # MemoryError included: the parent decides what it means
                answer = pickle.dumps((False, _picklable(exc)), protocol=pickle.HIGHEST_PROTOCOL)
            args = None  # the call's document is let go before the next one is read
            for limit, (soft, hard) in started_under.items():
                resource.setrlimit(limit, (soft, hard))
            _write_message(write_end, answer)
            header = _read_exactly(read_end, _LENGTH_BYTES)
            request = None if header is None else _read_exactly(read_end, int.from_bytes(header, "big"))
            args = None if request is None else pickle.loads(request)
            del request
    except BaseException:
        status = 2  # no answer: the parent reports the child's end
    finally:
        os._exit(status)


def _become_disposable(parent: int) -> None:
    """What a child forked to run a decoder does first: die with its parent, dump no core, keep no handler."""
    _die_with(parent)
    faulthandler.disable()  # a decoder's crash is answered by the parent, not dumped to the log
    _no_core_dump()  # a crash dumping hundreds of megabytes of address space to disk, each time
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(number, signal.SIG_DFL)  # the pool process's handlers are not this child's


def _serve(write_end: int, parent: int, function: Callable[..., Any], args: tuple) -> None:
    status = 0
    try:
        _become_disposable(parent)
        try:
            answer = pickle.dumps((True, function(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # MemoryError included: the parent decides what it means
            status = 1
            answer = pickle.dumps((False, _picklable(exc)), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(answer)
        while view:
            view = view[os.write(write_end, view) :]
    except BaseException:
        status = 2  # no answer: the parent reports the child's end
    finally:
        os._exit(status)


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        if isinstance(exc, MemoryError):
            return MemoryError(str(exc))
        return InvalidDocument(f"{type(exc).__name__}: {exc}")


def _die_with(parent: int) -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(3)


def _no_core_dump() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _prctl(_PR_SET_DUMPABLE, 0)  # also when core_pattern pipes dumps to a helper, which ignores RLIMIT_CORE


def _prctl(option: int, value: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(option, value)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"
    return f"exit status {os.WEXITSTATUS(status)}"

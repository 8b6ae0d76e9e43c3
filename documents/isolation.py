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

The child dies with its parent (``PR_SET_PDEATHSIG``), and the parent kills
it when it stops waiting early (the job's time limit), so no child outlives
its page; it dumps no core, so its crashes cost no disk.  Linux only, like
the rest of the workers' process handling.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import pickle
import resource
import signal
from collections.abc import Callable
from typing import Any, TypeVar

from jobs.errors import InvalidDocument

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_READ_CHUNK = 1 << 20
_libc: Any = None


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


def _serve(write_end: int, parent: int, function: Callable[..., Any], args: tuple) -> None:
    status = 0
    try:
        _die_with(parent)
        faulthandler.disable()  # a decoder's crash is answered by the parent, not dumped to the log
        _no_core_dump()  # a crash dumping hundreds of megabytes of address space to disk, each time
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
            signal.signal(number, signal.SIG_DFL)  # the pool process's handlers are not this child's
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

"""Deadlines for the bench's phases: a hang stops the run loudly instead of stalling it.

A benchmark waits on many things it does not control: processes getting
ready, groups finishing, helper processes exiting.  Every such wait runs
inside ``Deadlines.phase(name, seconds)``, and phases nest (the benchmark as
a whole, then each of its phases).  When a phase outlives its deadline,
``DeadlineExceeded`` is raised in the main thread, naming the benchmark and
the phase, and the run stops.  The deadlines are hang detectors, not speed
checks: each is many times what its phase takes on a slow shared machine.

Why a signal: a hang is a call that does not return (a socket read, a lock,
a join), so no check between calls can see it.  SIGALRM makes the blocked
system call return EINTR and Python runs the handler in the main thread,
which raises out of whatever was blocked.

Before raising, the handler kills the helper processes the run started with
``multiprocessing``, so that unwinding (a pool joining its processes) cannot
hang in turn; and while an expired phase unwinds, the alarm comes back every
``GRACE_SECONDS`` to interrupt a cleanup that blocks all the same.  The
Celery, gunicorn and Redis processes are killed by ``Bench.close()``.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

GRACE_SECONDS = 30.0
#: How early SIGALRM may come (timer and clock granularity) and still count as due.
TOLERANCE_SECONDS = 0.01


class DeadlineExceeded(BaseException):
    """Raised when a phase runs past its deadline.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception``
    on the way out (a client library's retry, a benchmark's own handling)
    can swallow it: the run must stop.
    """

    def __init__(self, message: str, path: tuple[str, ...], seconds: float):
        super().__init__(message)
        self.path = path
        self.seconds = seconds


@dataclass
class _Phase:
    path: tuple[str, ...]
    seconds: float
    started: float
    expired: bool = False

    @property
    def expires(self) -> float:
        return self.started + self.seconds


@dataclass
class _Record:
    """How long a phase took (its longest run, if it ran more than once) against its deadline."""

    seconds: float
    deadline: float
    runs: int = 1


@dataclass
class Deadlines:
    """The stack of open phases and one ITIMER_REAL armed for the earliest deadline among them.

    ``scale`` multiplies every deadline (``--deadline-scale`` for a very slow
    machine).  Only the main thread may open a phase: signals are handled there.
    """

    scale: float = 1.0
    grace: float = GRACE_SECONDS
    records: dict[tuple[str, ...], _Record] = field(default_factory=dict)
    _open: list[_Phase] = field(default_factory=list)
    _previous_handler: Any = None

    @contextmanager
    def phase(self, name: str, seconds: float) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("a phase with a deadline can only run in the main thread")
        path = (self._open[-1].path if self._open else ()) + (name,)
        entry = _Phase(path, seconds * self.scale, time.monotonic())
        if not self._open:
            self._previous_handler = signal.signal(signal.SIGALRM, self._on_alarm)
        try:
            self._open.append(entry)
            self._arm()
            yield
        finally:
            # The timer is stopped first, so that no alarm lands halfway
            # through the bookkeeping; phases left open inside this one (an
            # alarm raised as one was opening or closing) close with it.
            signal.setitimer(signal.ITIMER_REAL, 0)
            if entry in self._open:
                del self._open[self._open.index(entry) :]
            if self._open:
                self._arm()
            else:
                signal.signal(signal.SIGALRM, self._previous_handler or signal.SIG_DFL)
            self._record(entry, time.monotonic() - entry.started)

    def report(self, first: str) -> list[dict[str, Any]]:
        """Every phase recorded under ``first`` (a benchmark's name): longest time, deadline, runs."""
        return [
            {
                "phase": " > ".join(path),
                "longest_seconds": round(r.seconds, 3),
                "deadline_seconds": r.deadline,
                "runs": r.runs,
            }
            for path, r in self.records.items()
            if path[0] == first
        ]

    def _record(self, entry: _Phase, seconds: float) -> None:
        known = self.records.get(entry.path)
        if known is None:
            self.records[entry.path] = _Record(seconds, entry.seconds)
        else:
            known.seconds, known.deadline = max(known.seconds, seconds), max(known.deadline, entry.seconds)
            known.runs += 1

    def _arm(self) -> None:
        if any(p.expired for p in self._open):
            delay = self.grace
        else:
            delay = min(p.expires for p in self._open) - time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, max(delay, 0.001))

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if not self._open:
            return  # the last phase closed just as the timer fired
        now = time.monotonic()
        due = [p for p in self._open if p.expires <= now + TOLERANCE_SECONDS]
        if not due:
            self._arm()  # early by more than the tolerance: wait for the rest
            return
        first = min(due, key=lambda p: p.expires)
        innermost = self._open[-1]
        if first.expired:
            message = (
                f"{_describe(first.path)} ran past its deadline of {first.seconds:g} s, and "
                f"its cleanup was still blocked {now - first.expires:.1f} s later"
            )
        else:
            message = f"{_describe(first.path)} ran past its deadline of {first.seconds:g} s"
        if innermost is not first:
            message += f", in phase {' > '.join(innermost.path[1:])!r}"
        for p in due:
            p.expired = True
        kill_helper_processes()
        self._arm()
        raise DeadlineExceeded(message, first.path, first.seconds)


def _describe(path: tuple[str, ...]) -> str:
    if len(path) == 1:
        return f"{path[0]} (the benchmark as a whole)"
    return f"{path[0]}: phase {' > '.join(path[1:])!r}"


def kill_helper_processes() -> None:
    """SIGKILL every live process this process started with ``multiprocessing``."""
    for child in multiprocessing.active_children():
        child.kill()

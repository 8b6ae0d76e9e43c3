"""The Tesseract languages the live workers have, as a gateway process knows them.

Every tesseract submission checks its languages against them
(``gateway.submission.check_languages``), so a process reads the workers'
reports (``jobs.worker_reports``) at most once per ``CACHE_SECONDS`` and
answers from memory in between.  A language refused now is looked up
again once that time is up, so a worker that has just started with it is
seen a second later at most.  A refusal does not read again at once: a
client sending unknown languages in a loop would make every request a
Redis read.

That no worker is live (none has reported: the stack starts, every worker
restarts, or no worker here reads Tesseract's queue) is kept as long: a
deployment without a Tesseract worker pays no read per submission, and the
first worker's report counts a second later at most.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from jobs.worker_reports import WorkerReports

#: How long a process answers from what it last read.
CACHE_SECONDS = 1.0


class LiveLanguages:
    def __init__(
        self, reports: WorkerReports, max_age: float = CACHE_SECONDS, clock: Callable[[], float] = time.monotonic
    ):
        self.reports = reports
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._known: frozenset[str] | None = None
        self._read_at: float | None = None  # never read yet

    def get(self) -> frozenset[str] | None:
        """The union of the live workers' languages; None when no worker is live."""
        with self._lock:
            if self._read_at is not None and self._clock() - self._read_at < self.max_age:
                return self._known
        known = self.reports.languages()  # outside the lock: a slow read holds no other request up
        with self._lock:
            self._known, self._read_at = known, self._clock()
        return known

"""An OCR worker's report of the Tesseract languages it has, kept alive while the worker lives.

The worker's main process reports when it is ready and renews the report
from a daemon thread every ``OCRGW_WORKER_REPORT_INTERVAL`` seconds; the
report lapses three intervals after the last renewal (a worker killed
without a word), and goes at once at a clean shutdown.  The gateway reads
the live reports (``jobs.worker_reports``) to refuse a language no worker
has and to list them in ``GET /models``.

Only a worker that consumes the Tesseract queue reports: one narrowed to
other models (``OCRGW_WORKER_QUEUES``) runs no Tesseract job, whatever it
has installed.  A worker without the ``tesseract`` binary reports no
language.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

import pytesseract

from jobs.config import Settings
from jobs.registry import NOT_A_LANGUAGE
from jobs.worker_reports import WorkerReports

log = logging.getLogger(__name__)


def installed_languages(list_languages: Callable[[], Iterable[str]] = pytesseract.get_languages) -> frozenset[str]:
    """The languages ``tesseract --list-langs`` lists, ``osd`` left out; none without the binary."""
    try:
        return frozenset(list_languages()) - {NOT_A_LANGUAGE}
    except (pytesseract.TesseractNotFoundError, OSError) as error:
        log.warning("this worker has no usable tesseract, so it reports no language: %s", error)
        return frozenset()


class LanguageReporter:
    """Reports ``languages`` as worker ``name`` now and every ``interval`` seconds until ``stop``."""

    def __init__(self, reports: WorkerReports, name: str, languages: frozenset[str], settings: Settings):
        self.reports = reports
        self.name = name
        self.languages = languages
        self.interval = settings.worker_report_interval
        self.lifetime = settings.worker_report_lifetime
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ocrgw-language-report", daemon=True)

    def start(self) -> LanguageReporter:
        self._thread.start()
        return self

    def report_once(self) -> bool:
        """One report; False (logged) when Redis did not take it: the next interval tries again."""
        try:
            self.reports.report(self.name, self.languages, self.lifetime)
        except Exception as error:  # noqa: BLE001 - a store outage must not end the thread
            log.warning("could not report this worker's languages: %s", error)
            return False
        return True

    def stop(self) -> None:
        """Stops renewing and withdraws the report, so the gateways stop counting on this worker."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval + 5)
        try:
            self.reports.withdraw(self.name)
        except Exception as error:  # noqa: BLE001 - it lapses on its own anyway
            log.warning("could not withdraw this worker's languages (they lapse in %gs): %s", self.lifetime, error)

    def _run(self) -> None:
        # The first report at once: a worker counts from the moment it is ready.
        while not self._stopped.is_set():
            self.report_once()
            self._stopped.wait(self.interval)

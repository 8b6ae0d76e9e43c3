"""gunicorn's settings for the gateway: ``gunicorn --config python:observability.gunicorn_config ...`` (the Procfile).

gunicorn imports this module in its master, before any worker imports the
app, which is what multiprocess metrics need: the master takes a fresh
directory for the family (``observability.multiprocess``), its workers
inherit it, write their counts there, and any of them answering
``/metrics`` sums them all, so several workers give one coherent count.
``child_exit`` marks a worker that exited as dead (its live gauges go, its
counters stay) and ``on_exit`` removes the directory.

It also sets gunicorn's logging: with ``OCRGW_LOG_FORMAT=json`` its own
lines, the access lines and the app's go out as JSON (see
``observability.logs``); otherwise gunicorn's defaults are left alone.  Its
worker class is ``gateway.gunicorn_worker``'s, which answers a request
gunicorn refuses (a request line or headers too large) with a problem
document.  The command line's options (bind, workers, threads...) are not
set here.
"""

from __future__ import annotations

import logging
from typing import Any

from jobs.config import InvalidSettings, Settings
from observability import logs, multiprocess

try:
    _settings = Settings.from_env()
except InvalidSettings:
    # The app reports the bad variable when a worker builds it, as it does without this module.
    _settings = Settings()

multiprocess.use_directory("web", _settings)
# Requests gunicorn refuses itself (a request line or headers too large) are answered as problems too.
# Named, not imported: the master imports nothing of the app before its metrics directory is chosen.
worker_class = "gateway.gunicorn_worker.ProblemWorker"
logconfig_dict = logs.logconfig_dict(_settings.log_format, logs.secrets_of(_settings))
if logconfig_dict:
    logging.captureWarnings(True)  # warnings too go out as log lines


def child_exit(server: Any, worker: Any) -> None:
    multiprocess.mark_dead(worker.pid)


def on_exit(server: Any) -> None:
    multiprocess.remove_own_directory()

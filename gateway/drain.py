"""Draining: refusing new jobs while still answering polls, before a stop.

Two flags, either of which makes ``POST /jobs`` answer ``503 draining``
(with ``Retry-After``) and ``/readyz`` fail, while ``GET /jobs/{id}`` keeps
working:

* the process-local flag, set by SIGTERM.  The hook below also holds the
  process's own SIGTERM handler (gunicorn's graceful stop) back for a
  drain window (``OCRGW_DRAIN_SECONDS``), so the gateway keeps serving,
  and refusing, long enough for the load balancer to see ``/readyz`` fail
  and move clients to other replicas.  Only then does the worker stop
  accepting connections, finish the requests in flight and exit.
* the fleet-wide flag in the job store, for every gateway at once::

      python -m gateway.drain on | off | status
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from redis.exceptions import RedisError

from jobs.config import Settings
from jobs.settings_declaration import without_password
from jobs.store import JobStore

log = logging.getLogger(__name__)

DRAINING = threading.Event()


def start_draining() -> None:
    DRAINING.set()


def is_draining() -> bool:
    return DRAINING.is_set()


def install_sigterm_hook(drain_seconds: float = 0.0) -> None:
    """Makes SIGTERM set the drain flag, then, ``drain_seconds`` later, do what it did before.

    gunicorn installs its worker's own SIGTERM handler (graceful stop)
    before it loads the app, so the handler found here is chained, not
    replaced.  For a gunicorn worker the window is capped at half of its
    ``graceful_timeout``: the arbiter kills a worker that is still there
    after that long, and the requests in flight when the window ends need
    the other half.  A second SIGTERM ends the window at once.

    Signal handlers can only be set from the main thread; an app built
    elsewhere relies on the store's flag alone.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or getattr(previous, "drains_ocrgw", False):
        return  # a handler set outside Python cannot be chained; ours is already in place
    window = _window(drain_seconds, previous)
    timer: threading.Timer | None = None  # only ever touched by on_sigterm, in the main thread

    def stop(signum, frame) -> None:
        """Hands SIGTERM to the handler found at install time; runs in the main thread."""
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    def window_over() -> None:
        # Back through on_sigterm, so the previous handler runs where
        # handlers belong: in the main thread.
        log.warning("drain window over: stopping")
        os.kill(os.getpid(), signal.SIGTERM)

    def on_sigterm(signum, frame) -> None:
        nonlocal timer
        start_draining()
        if timer is None and window > 0:
            timer = threading.Timer(window, window_over)
            timer.name, timer.daemon = "ocrgw-drain", True
            timer.start()
            log.warning("SIGTERM: draining for %g s (new jobs refused, /readyz failing), then stopping", window)
            return
        if timer is not None:
            timer.cancel()  # the window is over, or SIGTERM came again: stop now
        stop(signum, frame)

    on_sigterm.drains_ocrgw = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGTERM, on_sigterm)
    # Keep gunicorn's choice: SIGTERM must not interrupt system calls of requests in progress.
    signal.siginterrupt(signal.SIGTERM, False)


def _window(drain_seconds: float, previous) -> float:
    owner = getattr(previous, "__self__", None)
    graceful = getattr(getattr(owner, "cfg", None), "graceful_timeout", None)
    if isinstance(graceful, (int, float)) and drain_seconds > graceful / 2:
        log.warning(
            "OCRGW_DRAIN_SECONDS=%g is over half of gunicorn's graceful timeout (%g s); draining %g s",
            drain_seconds,
            graceful,
            graceful / 2,
        )
        return graceful / 2
    return max(0.0, drain_seconds)


def main(argv: list[str] | None = None) -> int:
    """``python -m gateway.drain on|off|status``: the store's drain flag, for every gateway."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in ("on", "off", "status"):
        print("usage: python -m gateway.drain on|off|status", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    try:
        store = JobStore.from_settings(settings)
        if args[0] != "status":
            store.set_draining(args[0] == "on")
        print("draining" if store.is_draining() else "not draining")
    except RedisError as error:
        print(f"the job store at {without_password(settings.redis_url)} does not answer: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

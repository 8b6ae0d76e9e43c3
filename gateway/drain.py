"""The process-local drain flag: set once this gateway process is told to stop.

Between SIGTERM and exit, gunicorn still serves requests on open
connections; answering them ``503 draining`` (and failing ``/readyz``)
moves clients and the load balancer to other replicas instead of accepting
work here at the last moment.  The fleet-wide flag lives in the job store
(``JobStore.set_draining``); either one refuses new jobs.
"""

from __future__ import annotations

import os
import signal
import threading

DRAINING = threading.Event()


def start_draining() -> None:
    DRAINING.set()


def is_draining() -> bool:
    return DRAINING.is_set()


def install_sigterm_hook() -> None:
    """Makes SIGTERM set the drain flag, then do whatever it did before.

    gunicorn installs its worker's own SIGTERM handler (graceful stop)
    before it loads the app, so the handler found here is chained, not
    replaced.  Signal handlers can only be set from the main thread; an app
    built elsewhere relies on the store's flag alone.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or getattr(previous, "drains_ocrgw", False):
        return  # a handler set outside Python cannot be chained; ours is already in place

    def on_sigterm(signum, frame):
        start_draining()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    on_sigterm.drains_ocrgw = True
    signal.signal(signal.SIGTERM, on_sigterm)

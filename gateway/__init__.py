"""The HTTP gateway: validates submissions, creates jobs in the store, answers polls.

gunicorn serves ``gateway:create_app()``.  The gateway holds no state of
its own beyond a drain flag, so any number of replicas can run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

    from gateway.publishing import Publish
    from jobs.config import Settings
    from jobs.store import JobStore


GUNICORN_WORKER_BOOT_ERROR = 3


def create_app(
    settings: Settings | None = None,
    store: JobStore | None = None,
    publish: Publish | None = None,
) -> Flask:
    # Imported here, not at the top, so that ``python -m gateway.drain``
    # runs its module once, as __main__, without importing it first.
    from flask import Flask

    from gateway import auth, browser, dashboard, drain, manual, metrics, openapi, problems, services, views
    from gateway.api import blueprint as api_blueprint
    from gateway.languages import LiveLanguages
    from gateway.submission import Parser
    from jobs.registry import install_remote_models
    from jobs.store import JobStore

    settings = settings or _settings_or_exit()
    if store is None:
        # A wrong password or TLS setting stops the worker with one line. Exit
        # status 3 is gunicorn's "worker failed to boot": its master then stops
        # too, rather than starting the worker again and again.
        from jobs import redis_access, store_layout

        redis_access.exit_if_refused(settings, exit_code=GUNICORN_WORKER_BOOT_ERROR)
        # A store laid out for another bucket count would strand every job: refused the same way.
        store_layout.exit_if_mismatched(settings, exit_code=GUNICORN_WORKER_BOOT_ERROR)
    install_remote_models(settings.remotes)
    store = store or JobStore.from_settings(settings)
    if publish is None:
        # Imported here so that an app built with its own publisher (tests)
        # never loads Celery or connects to a broker.
        from workers.dispatch import publisher

        publish = publisher(store)

    app = Flask(__name__)
    # werkzeug enforces this on Content-Length and, under gunicorn, on chunked bodies too.
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    api = openapi.create_api(app)
    problems.register(app)
    # Before the key check: a request under another site's name is refused whoever sends it.
    browser.install(app, settings.allowed_hosts)
    auth.install(app, settings.api_keys)
    models = views.models(openapi.options_json_schema(api))
    languages = LiveLanguages(store.workers)
    services.install(
        app, services.Services(settings, store, store.queries, publish, Parser(settings), models, languages)
    )
    api.register_blueprint(api_blueprint)
    app.register_blueprint(dashboard.blueprint)
    metrics.install(app, store, settings.metrics_token)
    manual.install(app)
    drain.install_sigterm_hook(settings.drain_seconds)
    _trace(app)
    return app


def _trace(app: Flask) -> None:
    """Traces the requests when the environment asks for it (``observability.tracing``)."""
    # Imported here, as in create_app: every module of the package imports this one first.
    from gateway import internal
    from observability import tracing

    # The requests the gateway makes of itself are a part of the page that makes them, not requests of their own.
    tracing.install_gateway(app, untraced=internal.is_internal)


def _settings_or_exit() -> Settings:
    """The environment's settings; a value ocrgw cannot use stops the worker with one line per variable.

    Exit status 3 (gunicorn's "worker failed to boot") stops gunicorn's master too, as above.
    """
    # Imported here, as in create_app: every module of the package imports this one first.
    import sys

    from jobs.config import InvalidSettings, Settings

    try:
        return Settings.from_env()
    except InvalidSettings as invalid:
        for problem in invalid.problems:
            print(f"ocrgw: {problem}", file=sys.stderr, flush=True)
        raise SystemExit(GUNICORN_WORKER_BOOT_ERROR) from None

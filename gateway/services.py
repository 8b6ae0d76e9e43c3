"""What the API's routes work with, kept on the app rather than in globals or closures.

``create_app`` makes one ``Services`` per app (tests build an app around a
fake Redis and a recording publisher) and installs it; a route reads it
with ``services()`` while it serves a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app

from gateway.languages import LiveLanguages
from gateway.publishing import Publish
from gateway.submission import Parser
from jobs.config import Settings
from jobs.queries import JobQueries
from jobs.store import JobStore

#: The key of ``app.extensions`` they are kept under.
EXTENSION = "ocrgw"


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: JobStore
    queries: JobQueries
    publish: Publish
    parser: Parser  # reads submissions under these settings
    models: dict[str, Any]  # the GET /models document, made once, without the live languages
    languages: LiveLanguages  # the Tesseract languages the live workers have


def install(app: Flask, services: Services) -> None:
    app.extensions[EXTENSION] = services


def services() -> Services:
    """The services of the app serving the current request."""
    found: Services = current_app.extensions[EXTENSION]
    return found

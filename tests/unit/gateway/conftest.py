"""Fixtures for the gateway: an app around a fake Redis (running the real Lua) and a recording publisher."""

from __future__ import annotations

import fakeredis
import pytest

from gateway import create_app, drain
from jobs.config import Settings
from jobs.records import Dispatch
from jobs.store import JobStore

from .documented import documented_client

# Small limits, so that the tests reach them with small requests.
MAX_CHILDREN = 4
MAX_PAGES = 50
MAX_BODY_BYTES = 8192


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=MAX_BODY_BYTES)


@pytest.fixture
def redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


@pytest.fixture
def store(redis, settings) -> JobStore:
    return JobStore(redis, settings)


@pytest.fixture
def published() -> list[list[Dispatch]]:
    """Every call of the app's publisher, with the dispatches it was given."""
    return []


@pytest.fixture
def app(settings, store, published):
    def publish(dispatches):
        published.append(list(dispatches))
        return len(dispatches)

    return create_app(settings, store, publish)


@pytest.fixture
def client(app):
    """The app's test client; every answer is checked against the OpenAPI document."""
    return documented_client(app)


@pytest.fixture
def keyspace(redis):
    """A snapshot of the whole fake Redis: every key name, and DBSIZE."""

    def snapshot():
        return sorted(redis.keys()), redis.dbsize()

    return snapshot


@pytest.fixture(autouse=True)
def not_draining():
    """The drain flag is process-wide: no test may leave it set for the next."""
    drain.DRAINING.clear()
    yield
    drain.DRAINING.clear()

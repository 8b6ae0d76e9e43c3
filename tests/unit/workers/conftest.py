import pytest

from tests.unit.workers.runner_support import SETTINGS, Harness


@pytest.fixture
def h(monkeypatch) -> Harness:
    """A runner over a fresh fakeredis store, with ``SETTINGS`` (see ``runner_support``)."""
    return Harness(SETTINGS, monkeypatch)

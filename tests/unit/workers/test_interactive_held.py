"""The worker's count of interactive messages it holds that no pool process has started
(``workers.tasks``): what ends a chain on RabbitMQ with more than one bucket."""

from __future__ import annotations

import weakref

import pytest
from celery.worker import state as worker_state

from workers import tasks


class Request:
    def __init__(self, queue: str):
        self.delivery_info = {"routing_key": queue}


class Task:
    def __init__(self, queue: str):
        self.request = Request(queue)


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    monkeypatch.setattr(worker_state, "reserved_requests", weakref.WeakSet())
    monkeypatch.setattr(worker_state, "active_requests", weakref.WeakSet())
    tasks._interactive_held.value = 0
    yield
    tasks._interactive_held.value = 0


def receive(request: Request) -> None:
    """What the consumer does with a message: the signal, then the request reserved."""
    tasks._interactive_received(request=request)
    worker_state.reserved_requests.add(request)


def test_interactive_messages_count_from_their_receipt_to_their_start():
    interactive, batch, other = Request("ocr.echo.interactive"), Request("ocr.echo"), Request("ocr.echo.interactive")
    receive(interactive)
    receive(batch)
    assert tasks._interactive_held.value == 1, "a batch message is not counted"
    receive(other)
    assert tasks._interactive_held.value == 2

    tasks._interactive_started(task=Task("ocr.echo.interactive"))  # a pool process starts one
    worker_state.active_requests.add(interactive)
    assert tasks._interactive_held.value == 1
    tasks._interactive_revoked(request=other)
    assert tasks._interactive_held.value == 0
    tasks._interactive_revoked(request=other)
    assert tasks._interactive_held.value == 0, "never below 0"


def test_the_next_message_sets_a_count_that_a_lost_connection_left_stale():
    held = Request("ocr.echo.interactive")
    receive(held)
    assert tasks._interactive_held.value == 1
    worker_state.reserved_requests.discard(held)  # the connection was lost: reserved requests dropped, no signal

    receive(Request("ocr.echo"))

    assert tasks._interactive_held.value == 0

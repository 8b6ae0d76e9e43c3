"""The publisher every process uses: when the broker refuses a publish, the wake-ups it held are taken back
off their models' counts, so that the next transition asks for them again."""

import pytest

from jobs.records import Dispatch
from jobs.transitions.spec import PULL
from workers import dispatch

WAKE = Dispatch("", "echo", PULL, "batch")
RUN = Dispatch("0" * 32, "echo")


class Counts:
    def __init__(self):
        self.withdrawn: list[list[Dispatch]] = []

    def withdraw_wakeups(self, unsent):
        self.withdrawn.append(list(unsent))


def refuse(*_args, **_kwargs):
    raise ConnectionError("the broker is down")


def test_a_refused_publish_withdraws_what_it_did_not_send(monkeypatch):
    monkeypatch.setattr(dispatch.app, "producer_or_acquire", refuse)
    counts = Counts()
    assert dispatch.publisher(counts)([WAKE, RUN]) == 0
    assert counts.withdrawn == [[WAKE, RUN]]


@pytest.mark.parametrize("dispatches", [[], [WAKE]])
def test_nothing_is_withdrawn_when_nothing_failed(monkeypatch, dispatches):
    monkeypatch.setattr(dispatch, "publish", len)
    counts = Counts()
    assert dispatch.publisher(counts)(dispatches) == len(dispatches)
    assert counts.withdrawn == []


def test_a_store_that_is_down_too_leaves_the_count_to_lapse(monkeypatch):
    class Down:
        def withdraw_wakeups(self, unsent):
            raise ConnectionError("the store is down")

    monkeypatch.setattr(dispatch.app, "producer_or_acquire", refuse)
    assert dispatch.publisher(Down())([WAKE]) == 0

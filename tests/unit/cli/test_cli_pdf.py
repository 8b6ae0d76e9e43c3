"""The client follows a searchable PDF being built (202 + Retry-After) until it is there, within a bound."""

from __future__ import annotations

import pytest
import requests

from cli.client import ApiError, Gateway


def answer(status: int, body: bytes, **headers: str) -> requests.Response:
    response = requests.Response()
    response.status_code, response._content = status, body
    response.headers.update(headers)
    return response


class Answers(requests.Session):
    """Answers each request with the next of ``answers``; records the paths asked."""

    def __init__(self, *answers: requests.Response):
        super().__init__()
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    def request(self, method, url, **kwargs):  # type: ignore[override]
        self.asked.append((method, url))
        return self.answers.pop(0)


class Clock:
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


BUILDING = b'{"id": "j", "status": "building", "url": "/jobs/j/result.pdf"}'


def test_a_pdf_being_built_is_asked_for_again_after_each_retry_after_until_it_comes():
    session = Answers(answer(202, BUILDING, **{"Retry-After": "1"}), answer(202, BUILDING, **{"Retry-After": "2"}),
                      answer(200, b"%PDF-1.7 built", **{"Content-Type": "application/pdf"}))  # fmt: skip
    clock = Clock()

    pdf = Gateway("http://gw", session=session).result_pdf("j", sleep=clock.sleep, clock=clock)

    assert pdf == b"%PDF-1.7 built"
    assert clock.sleeps == [1.0, 2.0]
    assert session.asked == [("GET", "http://gw/jobs/j/result.pdf")] * 3


def test_a_pdf_still_building_past_the_wait_is_an_error_saying_so():
    session = Answers(*[answer(202, BUILDING, **{"Retry-After": "1"}) for _ in range(4)])
    clock = Clock()

    with pytest.raises(ApiError) as caught:
        Gateway("http://gw", session=session).result_pdf("j", wait_seconds=2.5, sleep=clock.sleep, clock=clock)

    assert caught.value.code == "pdf_building" and clock.sleeps == [1.0, 1.0]

"""The hub, the one thread of a gateway process that serves every handed-off stream, on a fake Redis.

The gunicorn worker hands it a connected socket; here the socket is one end
of a socket pair and the test reads the other, as a client would.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from gateway import streaming
from jobs import watching
from jobs.watching import Look
from tests.harness import wait_until
from tests.keyspace import keys

from .test_gateway_event_stream import ended_group, parse
from .test_gateway_views import submit_group


@pytest.fixture
def hub(redis) -> Iterator[streaming.Hub]:
    running = streaming.Hub(redis, keys, poll_seconds=0.02)
    try:
        yield running
    finally:
        running.stop()


def handed(hub: streaming.Hub, streams: streaming.OpenStreams, job_id: str, max_seconds: float = 60.0) -> socket.socket:
    """Hands the hub a stream of ``job_id`` on one end of a socket pair; the client's end."""
    session = streaming.Session(job_id, watching.START, streams.admit("default"), time.monotonic(), 10.0, max_seconds)
    server, client = socket.socketpair()
    client.settimeout(10)
    hub.adopt(server, session)
    return client


def read_until(client: socket.socket, text: bytes) -> bytes:
    """What the client's end receives until ``text`` is among it."""
    received = b""
    while text not in received:
        chunk = client.recv(65536)
        assert chunk, f"the stream ended before {text!r}: {received!r}"
        received += chunk
    return received


def read_to_end(client: socket.socket) -> str:
    """What the client's end receives until the hub closes the stream; then the client closes its end."""
    received = b""
    with client:
        while chunk := client.recv(65536):
            received += chunk
    return received.decode()


def test_the_hub_serves_a_stream_to_the_job_s_end_then_closes_it_and_gives_its_place_back(client, store, hub):
    parent_id = ended_group(client, store, 3)
    streams = streaming.OpenStreams(10, 10)

    body = read_to_end(handed(hub, streams, parent_id))

    assert body.startswith("retry: 1000\n")
    events = parse(body)
    listed = client.get(f"/jobs/{parent_id}/events").get_json()["events"]
    assert [e["data"] for e in events if e["event"] == "audit"] == listed
    assert events[-1]["data"]["reason"] == "terminal"
    assert streams.total == 0


def test_streams_of_one_job_share_its_looks_and_each_gets_all_of_it(client, store, hub):
    parent_id = ended_group(client, store, 2)
    streams = streaming.OpenStreams(10, 10)

    bodies = [read_to_end(c) for c in [handed(hub, streams, parent_id) for _ in range(5)]]

    assert len({body for body in bodies}) == 1


def test_a_client_that_leaves_is_noticed_and_its_place_given_back(client, store, hub):
    parent_id = submit_group(client, 2, 1)  # held and queued: it never ends here
    streams = streaming.OpenStreams(10, 10)
    leaving = handed(hub, streams, parent_id)
    read_until(leaving, b"event: progress")

    leaving.close()

    wait_until(lambda: streams.total == 0, timeout=10, message="the stream's place was not given back")
    assert hub.open == 0


def test_a_stream_that_fails_is_closed_and_the_others_are_served_on(client, store, hub, monkeypatch):
    running = submit_group(client, 2, 1)
    ended = ended_group(client, store, 1)
    streams = streaming.OpenStreams(10, 10)
    take = streaming.Session.take

    def failing_for_the_running_group(self, look, now):
        if self.job_id == running:
            raise RuntimeError("a bug")
        return take(self, look, now)

    monkeypatch.setattr(streaming.Session, "take", failing_for_the_running_group)
    broken, fine = handed(hub, streams, running), handed(hub, streams, ended)

    assert read_to_end(broken).startswith("retry:")  # closed without an end
    assert parse(read_to_end(fine))[-1]["data"]["reason"] == "terminal"
    assert hub.alive


def test_a_stream_ends_at_its_maximum_duration(client, hub):
    parent_id = submit_group(client, 1, 1)
    streams = streaming.OpenStreams(10, 10)

    body = read_to_end(handed(hub, streams, parent_id, max_seconds=0.2))

    assert parse(body)[-1]["data"] == {"job_id": parent_id, "reason": "max_duration", "status": None}


def test_a_stopping_hub_ends_every_stream_with_shutdown(client, redis):
    parent_id = submit_group(client, 1, 1)
    streams = streaming.OpenStreams(10, 10)
    hub = streaming.Hub(redis, keys, poll_seconds=0.02)
    open_one = handed(hub, streams, parent_id)
    read_until(open_one, b"event: progress")

    hub.stop()

    assert parse(read_to_end(open_one))[-1]["data"]["reason"] == "shutdown"
    assert streams.total == 0


def test_the_hub_brings_a_child_s_stream_to_its_end_behind_more_sibling_entries_than_a_look_reads(
    client, store, hub, monkeypatch
):
    parent_id = ended_group(client, store, 4)
    monkeypatch.setattr(streaming, "ENTRIES_PER_LOOK", 2)  # the trail holds 3 siblings' ends before the child's
    streams = streaming.OpenStreams(10, 10)

    body = read_to_end(handed(hub, streams, f"{parent_id}-3", max_seconds=30.0))

    assert parse(body)[-1]["data"] == {"job_id": f"{parent_id}-3", "reason": "terminal", "status": "completed"}


class IdleHub(streaming.Hub):
    """A hub whose thread serves nothing: the test takes its turns, one look at a time."""

    def _run(self) -> None:
        self._stopping.wait()
        for connection in list(self._connections.values()):
            self._close(connection)
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()


def test_the_hub_looks_again_at_once_only_while_its_looks_move_the_streams_on(client, store, redis, monkeypatch):
    parent_id = ended_group(client, store, 4)
    monkeypatch.setattr(streaming, "ENTRIES_PER_LOOK", 2)
    hub = IdleHub(redis, keys, poll_seconds=0.02)
    try:
        child = handed(hub, streaming.OpenStreams(10, 10), f"{parent_id}-3")
        hub._take_arrivals()

        # Three siblings' entries, then the child's and the group's: two looks read on, the third reads the end.
        assert [hub._look(), hub._look(), hub._look()] == [True, True, False]
        assert parse(read_to_end(child))[-1]["data"]["reason"] == "terminal"

        stuck = Look("a" * 32, "processing", kind="single", read_to_end=False)  # more to read, and nothing read
        monkeypatch.setattr(watching, "look", lambda client, keyspace, watched, count: [stuck])
        with handed(hub, streaming.OpenStreams(10, 10), "a" * 32):
            hub._take_arrivals()

            assert hub._look() is False  # it waits for the next poll rather than reading the same entries again
    finally:
        hub.stop()

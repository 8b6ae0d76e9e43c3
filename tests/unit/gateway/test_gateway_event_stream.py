"""GET /jobs/{id}/events as text/event-stream: its frames, ids, resuming, limits and end, on a fake Redis.

Under the test client no hub takes the connection: the request thread
writes the stream (``gateway.streaming.in_request_thread``), with the same
frames the hub writes.  The jobs here have ended before the stream is read,
so each stream ends by itself; the sessions' clocks are driven by hand.
"""

from __future__ import annotations

import contextlib
import json
import resource

import pytest

from gateway import streaming
from gateway.problems import Problem
from jobs import watching
from jobs.config import Settings
from jobs.ids import tenant_tag
from jobs.stream_leases import StreamLeases
from jobs.watching import Look
from tests.keyspace import keys

from .support import assert_problem
from .test_gateway_views import result, run, submit_group

STREAM = {"Accept": "text/event-stream"}


def parse(text: str) -> list[dict]:
    """The events of a stream's body: id, event, data (parsed) of each; comments and retry left out."""
    events = []
    for block in text.split("\n\n"):
        fields: dict = {}
        for line in block.split("\n"):
            if not line or line.startswith(":") or line.startswith("retry:"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = json.loads(value) if name == "data" else value
        if fields:
            events.append(fields)
    return events


def stream(client, job_id: str, **headers) -> list[dict]:
    response = client.get(f"/jobs/{job_id}/events", headers={**STREAM, **headers})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-store"
    return parse(response.get_data(as_text=True))


def ended_group(client, store, n: int = 3) -> str:
    parent_id = submit_group(client, n, 0)
    for i in range(n):
        run(store, f"{parent_id}-{i}", result(f"c{i}"))
    return parent_id


def test_an_ended_group_s_stream_carries_each_audit_event_once_with_its_entry_id_then_its_end(client, store):
    parent_id = ended_group(client, store)

    events = stream(client, parent_id)
    listed = client.get(f"/jobs/{parent_id}/events").get_json()["events"]

    audit = [e for e in events if e["event"] == "audit"]
    assert [e["data"] for e in audit] == listed
    assert [e["id"] for e in audit] == [e["id"] for e in listed]
    assert events[0]["event"] == "progress"
    assert events[0]["data"]["counts"]["completed"] == 3 and events[0]["data"]["status"] == "completed"
    children = [e["data"] for e in events if e["event"] == "child"]
    assert [(c["index"], c["status"]) for c in children] == [(0, "completed"), (1, "completed"), (2, "completed")]
    assert events[-1]["event"] == "end"
    assert events[-1]["data"] == {"job_id": parent_id, "reason": "terminal", "status": "completed"}
    assert events[-1]["id"] == listed[-1]["id"]
    assert all(e["id"] for e in events)


def test_the_json_list_stays_for_any_other_accept(client, store):
    parent_id = ended_group(client, store, 1)
    for accept in ("application/json", "*/*", "text/html"):
        response = client.get(f"/jobs/{parent_id}/events", headers={"Accept": accept})
        assert response.status_code == 200 and response.mimetype == "application/json"


def test_resuming_after_an_id_gets_exactly_the_events_after_it(client, store):
    parent_id = ended_group(client, store, 4)
    listed = client.get(f"/jobs/{parent_id}/events").get_json()["events"]

    for cut in range(len(listed)):
        events = stream(client, parent_id, **{"Last-Event-ID": listed[cut]["id"]})
        assert [e["data"] for e in events if e["event"] == "audit"] == listed[cut + 1 :]
        assert events[-1]["event"] == "end"


def test_a_child_s_stream_holds_its_own_events(client, store):
    parent_id = ended_group(client, store, 2)

    events = stream(client, f"{parent_id}-1")

    assert [(e["data"]["job_id"], e["data"]["operation"]) for e in events if e["event"] == "audit"] == [
        (f"{parent_id}-1", "job_child")
    ]
    assert events[0]["data"]["kind"] == "child"
    assert events[-1]["data"]["reason"] == "terminal"


def group_ending_with(client, store, n: int) -> str:
    """A group whose last child ends after its ``n - 1`` siblings: their entries come first in its trail."""
    parent_id = submit_group(client, n, 0)
    for i in range(n):
        run(store, f"{parent_id}-{i}", result(f"c{i}"))
    return parent_id


def test_a_child_s_look_says_how_far_it_read_past_its_siblings_entries(client, store):
    parent_id = group_ending_with(client, store, 4)
    trail = client.get(f"/jobs/{parent_id}/events").get_json()["events"]

    look = watching.look(store.redis, keys, [(f"{parent_id}-3", watching.START)], count=2)[0]

    assert look.entries == [] and not look.read_to_end
    assert look.read_to == watching.position_of(trail[1]["id"])


def test_a_child_s_stream_reaches_its_end_behind_more_sibling_entries_than_a_look_reads(client, store, monkeypatch):
    parent_id = group_ending_with(client, store, 4)
    monkeypatch.setattr(streaming, "ENTRIES_PER_LOOK", 2)  # the trail holds 3 siblings' ends before the child's
    child = f"{parent_id}-3"
    clock = iter(range(100, 10_000))  # each look a second later: a stream that read nothing new ends at 60 s
    slept: list[float] = []
    s = streaming.Session(child, watching.START, streaming.OpenStreams(5, 5).admit("t"), 100.0, 1000.0, 60.0)

    body = b"".join(
        streaming.in_request_thread(s, store.redis, keys, 0.5, clock=lambda: next(clock), sleep=slept.append)
    )

    events = parse(body.decode())
    assert [(e["data"]["job_id"], e["data"]["operation"]) for e in events if e["event"] == "audit"] == [
        (child, "job_child")
    ]
    assert events[-1]["data"] == {"job_id": child, "reason": "terminal", "status": "completed"}
    assert slept == []  # every look moved on, so each next one came at once


def test_a_stream_whose_look_did_not_move_on_waits_for_the_next_poll(redis, monkeypatch):
    s = session(max_seconds=60.0)
    stuck = Look("a" * 32, "processing", kind="single", read_to_end=False)
    monkeypatch.setattr(watching, "look", lambda client, keyspace, watched, count: [stuck])
    clock = iter(range(101, 10_000))  # a stream that never waits ends at its maximum duration, a minute of looks
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        raise Waited

    body = b"".join(_until_it_waits(streaming.in_request_thread(s, redis, keys, 0.5, lambda: next(clock), sleep)))

    assert slept == [0.5]
    assert [e["event"] for e in parse(body.decode())] == ["progress"]


class Waited(Exception):
    """Raised by a test's sleep: the stream waited for its next poll."""


def _until_it_waits(body):
    with contextlib.suppress(Waited):
        yield from body


@pytest.mark.parametrize("bad", ["x", "1-", "-1", "1-2-3", "01-1", "1.5-0", "99999999999999999999999-0"])
def test_a_last_event_id_that_names_no_event_is_400(client, store, bad):
    parent_id = ended_group(client, store, 1)
    assert_problem(
        client.get(f"/jobs/{parent_id}/events", headers={**STREAM, "Last-Event-ID": bad}), 400, "invalid_last_event_id"
    )


def test_another_tenant_s_or_an_unknown_job_is_404_as_a_stream_too(client):
    assert_problem(client.get("/jobs/0123456789abcdef0123456789abcdef/events", headers=STREAM), 404, "job_not_found")


# -- limits ---------------------------------------------------------------------------------------


def test_streams_past_a_tenant_s_limit_or_the_process_s_are_429_with_retry_after():
    streams = streaming.OpenStreams(per_process=3, per_tenant=2)
    alpha = [streams.admit("alpha"), streams.admit("alpha")]

    with pytest.raises(Problem) as refused:
        streams.admit("alpha")
    assert refused.value.code == "too_many_streams" and refused.value.extra["limit"] == "tenant"
    assert refused.value.headers["Retry-After"]
    beta = streams.admit("beta")
    with pytest.raises(Problem) as full:
        streams.admit("gamma")
    assert full.value.extra["limit"] == "process"

    alpha[0].release()
    alpha[0].release()  # once only
    assert streams.count("alpha") == 1 and streams.total == 2
    streams.admit("gamma")
    beta.release()
    assert streams.count("beta") == 0


def test_a_stream_over_the_limit_is_refused_by_the_route(client, store, app):
    parent_id = submit_group(client, 1, 1)  # never ends: its stream stays open while held
    open_streams = streaming.OpenStreams(per_process=10, per_tenant=0)
    app.extensions["ocrgw.open_streams"] = open_streams

    response = client.get(f"/jobs/{parent_id}/events", headers=STREAM)

    body = assert_problem(response, 429, "too_many_streams")
    assert body["limit"] == "tenant" and response.headers["Retry-After"]


def test_streams_a_request_thread_writes_have_a_cap_of_their_own():
    streams = streaming.OpenStreams(per_process=10, per_tenant=10)
    cap = streaming.request_thread_cap({streaming.REQUEST_THREADS: 4})  # gunicorn's four threads: two for streams
    held = [streams.admit("alpha", cap), streams.admit("beta", cap)]

    with pytest.raises(Problem) as refused:
        streams.admit("gamma", cap)
    handed_off = streams.admit("gamma")  # the hub's streams hold no thread: not counted against it
    held[0].release()
    again = streams.admit("gamma", cap)

    assert refused.value.code == "too_many_streams" and refused.value.extra["limit"] == "process"
    assert refused.value.extra["max_streams"] == 2 and "request threads" in refused.value.detail
    assert streams.in_request_threads == 2 and streams.total == 3
    assert streaming.request_thread_cap({streaming.REQUEST_THREADS: 1}) == 0  # one thread: it never holds it
    assert streaming.request_thread_cap({}) == streaming.REQUEST_THREAD_STREAMS
    for ticket in (held[1], handed_off, again):
        ticket.release()
    assert streams.in_request_threads == 0 and streams.total == 0


def test_a_finished_stream_gives_its_place_back(client, store, app):
    parent_id = ended_group(client, store, 1)
    stream(client, parent_id)
    assert app.extensions["ocrgw.open_streams"].total == 0


# -- a session, its clock driven by hand ------------------------------------------------------------


def session(max_seconds: float = 60.0, heartbeat: float = 10.0) -> streaming.Session:
    ticket = streaming.OpenStreams(5, 5).admit("t")
    return streaming.Session("a" * 32, watching.START, ticket, 100.0, heartbeat, max_seconds)


def running_group(in_flight: dict[str, tuple[int, str]]) -> Look:
    counts = {"held": 1, "queued": 0, "processing": 0, "completed": 0, "failed": 0, "cancelled": 0}
    for _, status in in_flight.values():
        counts[status] += 1
    return Look("a" * 32, "processing", kind="parent", total=3, counts=counts, in_flight=in_flight)


def test_a_child_s_start_is_said_once_per_status_and_a_quiet_stream_sends_heartbeats():
    s = session(heartbeat=10.0)
    child = "a" * 32 + "-0"

    first = parse(s.take(running_group({child: (0, "queued")}), 101.0).decode())
    again = s.take(running_group({child: (0, "queued")}), 102.0)
    moved = parse(s.take(running_group({child: (0, "processing")}), 103.0).decode())

    assert [e["event"] for e in first] == ["progress", "child"]
    assert first[1]["data"] == {"job_id": child, "index": 0, "status": "queued"}
    assert again == b""
    assert [(e["event"], e["data"].get("status")) for e in moved] == [
        ("progress", "processing"),
        ("child", "processing"),
    ]
    assert all(e["id"] == "0-0" for e in first + moved)  # no audit entry read yet: the position is the start
    assert s.timers(112.9) == b""
    assert s.timers(113.0) == b": heartbeat\n\n"
    assert s.timers(114.0) == b""


def test_a_stream_ends_cleanly_at_its_maximum_duration_and_gives_its_place_back():
    s = session(max_seconds=30.0)
    s.take(running_group({}), 101.0)

    ended = parse(s.timers(130.0).decode())

    assert ended == [
        {"id": "0-0", "event": "end", "data": {"job_id": "a" * 32, "reason": "max_duration", "status": None}}
    ]
    assert s.ended and s.ticket.released
    assert s.take(running_group({}), 131.0) == b"" and s.timers(131.0) == b""


def test_a_look_that_did_not_read_to_the_end_does_not_end_the_stream():
    s = session()
    look = Look("a" * 32, "completed", kind="single", entries=[], read_to_end=False)
    assert [e["event"] for e in parse(s.take(look, 101.0).decode())] == ["progress"]
    assert not s.ended


def test_a_gone_job_ends_its_stream():
    s = session()
    assert parse(s.take(Look("a" * 32, None), 101.0).decode())[-1]["data"]["reason"] == "gone"


def test_positions_are_entry_ids():
    assert watching.position_of("1733480000000-7") == (1733480000000, 7)
    assert watching.entry_id_of((5, 0)) == "5-0"
    with pytest.raises(watching.InvalidPosition):
        watching.position_of("5")


def test_the_stream_settings_are_declared():
    settings = Settings()
    assert settings.stream_max_per_process >= settings.stream_max_per_tenant >= 1
    assert settings.stream_max_seconds > settings.stream_heartbeat_seconds > 0


def test_head_of_a_stream_opens_none(client, store, app):
    parent_id = ended_group(client, store, 1)

    response = client.head(f"/jobs/{parent_id}/events", headers=STREAM)

    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert app.extensions.get("ocrgw.open_streams") is None  # nothing admitted, nothing counted


# -- a tenant's streams across gateways -------------------------------------------------------------


def test_a_tenant_s_limit_holds_across_gateway_processes_sharing_the_store(redis):
    first = streaming.OpenStreams(per_process=10, per_tenant=3, leases=StreamLeases(redis))
    second = streaming.OpenStreams(per_process=10, per_tenant=3, leases=StreamLeases(redis))
    held = [first.admit("alpha"), first.admit("alpha"), second.admit("alpha")]

    with pytest.raises(Problem) as refused:
        second.admit("alpha")

    assert refused.value.extra == {"limit": "tenant", "max_streams": 3}
    assert second.count("alpha") == 1  # the refused one holds no place
    assert StreamLeases(redis).held("alpha") == 3
    second.admit("beta")  # another tenant's are its own
    held[0].release()
    second.admit("alpha")
    assert StreamLeases(redis).held("alpha") == 3


def test_a_dead_process_s_leases_run_out_and_a_live_one_s_are_renewed(redis):
    now = [1000.0]
    leases = StreamLeases(redis, lease_ms=60_000, clock=lambda: now[0])
    dead = streaming.OpenStreams(per_process=10, per_tenant=2, leases=leases)
    live = streaming.OpenStreams(per_process=10, per_tenant=2, leases=leases)
    dead.admit("alpha")
    kept = live.admit("alpha")

    now[0] += 40  # the live process renews (every third of a lease); the dead one cannot
    live._renewed_at -= 60
    live.renew_if_due()
    now[0] += 30  # the dead one's lease has run out, the renewed one has not

    assert leases.held("alpha") == 1
    live.admit("alpha")
    kept.release()
    assert redis.ttl(keys.tenant_streams(tenant_tag("alpha"))) > 0  # the set expires with its newest lease


def test_a_tenant_s_stream_leases_are_in_its_ledger_s_slot():
    assert keys.tenant_streams("0123456789ab") == "ocrgw:{t0123456789ab}:streams"
    assert keys.tenant_streams("0123456789ab").partition("}")[0] == keys.ledger("0123456789ab").partition("}")[0]


def test_a_process_raises_its_open_file_limit_for_its_streams_or_keeps_fewer(monkeypatch):
    limits = {"soft": 1024, "hard": 4096}
    monkeypatch.setattr(resource, "getrlimit", lambda which: (limits["soft"], limits["hard"]))
    monkeypatch.setattr(resource, "setrlimit", lambda which, pair: limits.update(soft=pair[0]))

    assert streaming.fit_to_open_files(1000) == 1000
    assert limits["soft"] == 1000 + streaming.FILES_BESIDES_STREAMS

    limits.update(soft=1024, hard=2548)  # the hard limit leaves room for 500
    assert streaming.fit_to_open_files(1000) == 500

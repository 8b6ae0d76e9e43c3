"""``ocrgw submit --wait`` follows the job's live stream, and polls where the gateway serves none."""

from __future__ import annotations

import pytest

from cli.event_stream import Event, StreamUnavailable, follow, parse
from gateway.streaming import OpenStreams

from .test_cli_submit import write


def asked_for_a_stream(headers: dict[str, str]) -> bool:
    return headers.get("Accept") == "text/event-stream"


def test_wait_on_a_group_reads_its_stream_instead_of_polling(served, ocrgw, tmp_path):
    files = [str(write(tmp_path, f"part{i}.txt", f"part {i}")) for i in range(3)]

    result = ocrgw("submit", *files, "--model", "echo", "--max-parallel", "1", "--wait", "--interval", "0.05")

    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("completed 3/3 [completed 3] ")
    streams = [h for h in served.requests if asked_for_a_stream(h)]
    reads = [h for h in served.requests if not asked_for_a_stream(h) and "Content-Type" not in h]
    assert len(streams) == 1
    assert len(reads) == 1  # the view once the stream ended: no poll


def test_wait_polls_when_the_gateway_refuses_a_stream(served, ocrgw, tmp_path, monkeypatch):
    served_app_streams = OpenStreams(per_process=0, per_tenant=0)  # every stream refused: 429

    page = write(tmp_path, "note.txt", "polled")
    monkeypatch.setattr("gateway.api.events._open_streams", lambda: served_app_streams)

    result = ocrgw("submit", str(page), "--model", "echo", "--wait", "--interval", "0.05")

    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("completed 100% [completed 1] ")
    assert any(asked_for_a_stream(h) for h in served.requests)


def test_parse_reads_events_and_skips_comments_and_retry():
    lines = ["retry: 1000", ": hi", "", "id: 1-0", "event: audit", 'data: {"a":1}', "", ": heartbeat", ""]
    assert list(parse(lines)) == [Event("1-0", "audit", {"a": 1})]


def test_follow_reconnects_from_the_last_id_until_the_job_ended():
    streams = [
        [
            "id: 1-0",
            "event: audit",
            'data: {"n":1}',
            "",
            "id: 1-0",
            "event: end",
            'data: {"reason":"max_duration"}',
            "",
        ],
        ["id: 2-0", "event: audit", 'data: {"n":2}', ""],  # cut without an end
        ["id: 3-0", "event: end", 'data: {"reason":"terminal"}', ""],
    ]
    asked: list[str | None] = []

    def open_stream(last_event_id):
        asked.append(last_event_id)
        return iter(streams[len(asked) - 1])

    events = list(follow(open_stream))

    assert asked == [None, "1-0", "2-0"]
    assert [e.data for e in events if e.event == "audit"] == [{"n": 1}, {"n": 2}]
    assert events[-1].data == {"reason": "terminal"}


def test_follow_gives_up_on_a_stream_that_never_ends():
    with pytest.raises(StreamUnavailable):
        list(follow(lambda last: iter(["id: 1-0", "event: end", 'data: {"reason":"max_duration"}', ""]), 3))

"""Reading a job's live stream (``GET /jobs/{id}/events`` as ``text/event-stream``) as events.

The stream is Server-Sent Events: blocks of ``field: value`` lines ended
by an empty line; a line starting with ``:`` is a comment (a heartbeat).
Each event here is its ``id``, its ``event`` name and its ``data`` read as
the JSON the gateway writes.  ``follow`` reconnects with ``Last-Event-ID``
when a stream ends before the job did (its maximum duration, a gateway
that stopped, a dropped connection), so the caller sees each audit event
once and the job's end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    id: str
    event: str
    data: dict[str, Any]


def parse(lines: Iterable[str]) -> Iterator[Event]:
    """The events of a stream's lines (without their line ends), as they come."""
    fields: dict[str, str] = {}
    for line in lines:
        if not line:
            if "event" in fields and "data" in fields:
                yield Event(fields.get("id", ""), fields["event"], json.loads(fields["data"]))
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields[name] = value[1:] if value.startswith(" ") else value


def lines(raw: Any) -> Iterator[str]:
    """The lines of a response body as they arrive (``raw``: urllib3's response, as ``requests`` keeps it).

    ``read1`` gives what has arrived, where a plain read of a size would wait for that many bytes
    (or, of no size, for the end): an event is read the moment it is sent.
    """
    read = getattr(raw, "read1", None) or (lambda size: raw.read(1))
    pending = b""
    while chunk := read(1 << 16):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.removesuffix(b"\r").decode("utf-8")


class StreamUnavailable(Exception):
    """Raised when the gateway does not serve the stream (an older one, a limit reached): poll instead."""


def follow(open_stream: Callable[[str | None], Iterable[str]], reconnects: int = 100) -> Iterator[Event]:
    """The events of a job's stream until its ``end`` with ``reason: terminal`` (or ``gone``), reconnecting
    from the last id read when a stream ends otherwise; ``open_stream(last_event_id)`` opens one."""
    last_id: str | None = None
    for _ in range(reconnects + 1):
        try:
            for event in parse(open_stream(last_id)):
                last_id = event.id or last_id
                yield event
                if event.event == "end" and event.data.get("reason") in ("terminal", "gone"):
                    return
        except OSError:
            pass  # the connection dropped: reconnect from where it was
    raise StreamUnavailable(f"the stream ended {reconnects + 1} times before the job did")

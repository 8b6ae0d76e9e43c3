"""A job's live stream: ``GET /jobs/{id}/events`` as ``text/event-stream`` (Server-Sent Events).

What a stream says.  Each frame has an ``id``: the position in the job's
audit trail (its root's Redis stream entry id) that the client has read up
to.  ``event: audit`` is one audit entry, rendered as the JSON events
endpoint renders it, its ``id`` the entry's own.  ``event: progress`` is
how far the job got (a group's total and counts per status, a job's stage
and progress), sent first and then whenever it changes.  ``event: child``
is a child's status change: its start (``queued``, ``processing``) as seen
in its parent's per-status sets, its end with its audit entry.  The last
frame is ``event: end``, with ``reason``: ``terminal`` once the job has
ended (after its terminal audit entry), ``max_duration`` after
``OCRGW_STREAM_MAX_SECONDS``, ``gone`` when the job was deleted,
``shutdown`` when the gateway process stops; then the response ends.

Resuming.  A client that reconnects with ``Last-Event-ID`` gets the audit
entries after that position, each once, and then the current progress and
children in flight afresh: a status is a state, so it is sent again, while
an audit entry is an event, so it never is.  No write is added to a job's
path for this: a stream is made of reads (``jobs.watching``).

Bounds.  ``OCRGW_STREAM_MAX_PER_TENANT`` caps a tenant's open streams on
every gateway together (each holds a lease in the store,
``jobs.stream_leases``), ``OCRGW_STREAM_MAX_PER_PROCESS`` the streams one
gateway process keeps open; past either, ``429 too_many_streams`` (with
``Retry-After``).  A stream written by its request thread (below) holds
that thread, so a process keeps few of those: half its request threads
under gunicorn (none with one thread), ``REQUEST_THREAD_STREAMS`` under
another server; past that, the same ``429`` (``limit: process``), and the
client polls.  A quiet stream sends a comment every
``OCRGW_STREAM_HEARTBEAT_SECONDS``; a client that does not read what it is
sent (more than ``MAX_UNSENT_BYTES`` waiting) is dropped.

No thread per client.  Under the gateway's gunicorn worker
(``gateway.gunicorn_worker``) the view checks the key, the job and the
limits in its request thread, gunicorn sends the response's head, and the
connection is handed to the process's one ``Hub`` thread, which serves
every open stream: a selector over their sockets (to see a client leave
and to write without blocking) and, every ``OCRGW_STREAM_POLL_SECONDS``,
one pipelined look at every watched job, shared by the streams that watch
the same job.  A job with more entries than one look reads is looked at
again at once, as long as each look moves its streams on; else at the next
poll.  The request thread returns at once.  Anywhere else (Flask's test
client, another WSGI server, TLS or HTTP/2 terminated by gunicorn itself)
the same frames are written by the request thread, which then holds it for
the stream's life.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import resource
import selectors
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from gateway import views
from gateway.problems import RETRY_AFTER_SECONDS, Problem
from gateway.responses import EventSchema
from jobs import watching
from jobs.config import Settings
from jobs.connections import StoreClient
from jobs.contract import JobKind, JobStatus
from jobs.keys import Keyspace
from jobs.stream_leases import StreamLeases
from jobs.watching import Look, Position

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
#: The response's headers besides its type: never cached, never buffered by a proxy (nginx reads the last).
HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
#: How long a client waits before it reconnects after the response ended (the ``retry`` field), ms.
RECONNECT_MS = 1000
#: What a client may leave unread before it is dropped: a stream is a few hundred bytes a second.
MAX_UNSENT_BYTES = 1 << 20
#: Audit entries one look reads per watched job; the rest come at the next look.
ENTRIES_PER_LOOK = 500

#: The environ keys between the gunicorn worker and the view: the worker can take the connection
#: over; the view asks it to, with the stream to serve.
CAN_HAND_OFF = "ocrgw.stream.can_hand_off"
HANDED_OFF = "ocrgw.stream.handed_off"
#: The environ key the gunicorn worker gives its number of request threads under.
REQUEST_THREADS = "ocrgw.stream.request_threads"
#: An ``audit`` frame's data: the event as ``GET /jobs/{id}/events`` lists it, dumped through the same schema.
_EVENT = EventSchema()
#: Streams a process writes from its request threads under a server that does not say how many it has.
REQUEST_THREAD_STREAMS = 2

_TERMINAL = frozenset(s.value for s in JobStatus if s.terminal)
_ACTIVE = (JobStatus.HELD.value, JobStatus.QUEUED.value, JobStatus.PROCESSING.value)


# -- frames --------------------------------------------------------------------------------------------


def frame(event: str, data: dict[str, Any], event_id: str) -> bytes:
    """One SSE event; its data is one line of JSON (JSON escapes newlines, so one ``data`` line holds it)."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return f"id: {event_id}\nevent: {event}\ndata: {text}\n\n".encode()


def comment(text: str) -> bytes:
    return f": {text}\n\n".encode()


def opening() -> bytes:
    """What a stream starts with: how long to wait before reconnecting, and a comment flushed at once."""
    return f"retry: {RECONNECT_MS}\n: {EVENT_STREAM}\n\n".encode()


# -- limits --------------------------------------------------------------------------------------------


class OpenStreams:
    """The streams this process keeps open, in all, per tenant, and written by request threads; admitting one
    past a limit is ``429``.

    With ``leases`` (``jobs.stream_leases``) a tenant's streams are counted
    across every gateway, each stream holding a lease in the store that this
    process renews while the stream is open; without, in this process only.
    """

    def __init__(self, per_process: int, per_tenant: int, leases: StreamLeases | None = None):
        self.per_process, self.per_tenant, self.leases = per_process, per_tenant, leases
        self._lock = threading.Lock()
        self._by_tenant: dict[str, int] = {}
        self._open: set[Ticket] = set()
        self._renewed_at = time.monotonic()
        self.total = 0
        self.in_request_threads = 0

    def admit(self, tenant: str, request_thread_cap: int | None = None) -> Ticket:
        """A place for one more stream of ``tenant``; with ``request_thread_cap``, for one its request thread
        writes, of which the process keeps at most that many."""
        in_request_thread = request_thread_cap is not None
        with self._lock:
            if self.total >= self.per_process:
                raise _too_many("process", self.per_process, "this gateway process")
            if request_thread_cap is not None and self.in_request_threads >= request_thread_cap:
                raise _too_many(
                    "process", request_thread_cap, "this gateway process", " written by its request threads"
                )
            if self._by_tenant.get(tenant, 0) >= self.per_tenant:
                raise _too_many("tenant", self.per_tenant, "your tenant")
            self.total += 1
            self.in_request_threads += in_request_thread
            self._by_tenant[tenant] = self._by_tenant.get(tenant, 0) + 1
            ticket = Ticket(self, tenant, uuid.uuid4().hex, in_request_thread)
        if self.leases is not None:
            try:
                admitted = self.leases.admit(tenant, ticket.stream_id, self.per_tenant)
            except BaseException:
                self._release(ticket, leased=False)
                raise
            if not admitted:
                self._release(ticket, leased=False)
                raise _too_many("tenant", self.per_tenant, "your tenant")
        with self._lock:
            self._open.add(ticket)
        return ticket

    def count(self, tenant: str) -> int:
        with self._lock:
            return self._by_tenant.get(tenant, 0)

    def renew_if_due(self) -> None:
        """Renews the leases of this process's open streams, every third of a lease."""
        if self.leases is None:
            return
        with self._lock:
            now = time.monotonic()
            if (now - self._renewed_at) * 1000 < self.leases.lease_ms / 3:
                return
            self._renewed_at = now
            open_now = [(t.tenant, t.stream_id) for t in self._open]
        try:
            self.leases.renew(open_now)
        except RedisError as error:
            log.warning("live streams: their leases were not renewed: %s", error)

    def _release(self, ticket: Ticket, leased: bool = True) -> None:
        with self._lock:
            self._open.discard(ticket)
            self.total -= 1
            self.in_request_threads -= ticket.in_request_thread
            left = self._by_tenant[ticket.tenant] - 1
            if left:
                self._by_tenant[ticket.tenant] = left
            else:
                del self._by_tenant[ticket.tenant]
        if leased and self.leases is not None:
            try:
                self.leases.release(ticket.tenant, ticket.stream_id)
            except RedisError as error:
                log.warning("live streams: a lease was not given back (it runs out by itself): %s", error)


#: Open files a gateway process keeps for everything but its streams: gunicorn's connections, Redis, logs.
FILES_BESIDES_STREAMS = 2048


def fit_to_open_files(per_process: int) -> int:
    """How many streams this process can keep open: ``per_process``, its open-file limit raised for them if
    the hard limit allows; fewer (with a warning) if it does not, so that a stream never takes the last
    descriptor gunicorn needs to accept a connection."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = per_process + FILES_BESIDES_STREAMS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return per_process
    fitted = max(1, soft - FILES_BESIDES_STREAMS)
    log.warning(
        "open files are limited to %d: this process keeps at most %d live event streams, not %d "
        "(OCRGW_STREAM_MAX_PER_PROCESS); raise the limit (ulimit -n) to keep more",
        soft,
        fitted,
        per_process,
    )
    return fitted


def request_thread_cap(environ: dict[str, Any]) -> int:
    """How many streams a process may write from its request threads: half of them under gunicorn (whose
    worker says how many it has), so that the others go on answering; ``REQUEST_THREAD_STREAMS`` elsewhere."""
    threads = environ.get(REQUEST_THREADS)
    return REQUEST_THREAD_STREAMS if threads is None else int(threads) // 2


def _too_many(limit: str, count: int, whose: str, which: str = "") -> Problem:
    return Problem(
        "too_many_streams",
        f"{whose.capitalize()} already keeps {count} event streams{which} open, the most it may.",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        limit=limit,
        max_streams=count,
    )


@dataclass(eq=False)
class Ticket:
    """One admitted stream's place in the count, given back once (whichever end comes first)."""

    streams: OpenStreams
    tenant: str
    stream_id: str
    in_request_thread: bool = False
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.streams._release(self)


# -- one stream ------------------------------------------------------------------------------------------


@dataclass
class Session:
    """One client's stream: what it has been sent, and the frames each look at its job adds."""

    job_id: str
    position: Position
    ticket: Ticket
    opened_at: float
    heartbeat_seconds: float
    max_seconds: float
    ended: bool = False
    _summary: dict[str, Any] | None = None
    # The status each child was last said to be in.
    _children: dict[str, str] = field(default_factory=dict)
    _quiet_since: float = 0.0

    def __post_init__(self) -> None:
        self._quiet_since = self.opened_at

    @property
    def event_id(self) -> str:
        return watching.entry_id_of(self.position)

    def take(self, look: Look, now: float) -> bytes:
        """The frames of what ``look`` shows that this client has not been sent; the end once the job has."""
        if self.ended:
            return b""
        out: list[bytes] = []
        summary = _summary_of(look)
        if summary is not None and summary != self._summary:
            self._summary = summary
            out.append(frame("progress", summary, self.event_id))
        for child_id, (index, status) in sorted(look.in_flight.items(), key=lambda item: item[1][0]):
            out.extend(self._child(child_id, index, status))
        for position, record in look.entries:
            if position <= self.position:
                continue  # another stream of the same job read from further back
            event = _EVENT.dump(views.event({**record, "id": watching.entry_id_of(position)}))
            if event["job_id"] != self.job_id and event["operation"] == "job_child":
                # Said before its entry, at the position before it: a client that leaves between the two
                # hears the child's end again when it resumes, rather than never.
                index = int(event["job_id"].rpartition("-")[2])
                out.extend(self._child(event["job_id"], index, event["status"]))
            self.position = position
            out.append(frame("audit", event, self.event_id))
        if look.read_to is not None and look.read_to > self.position:
            # Past the entries a child's look skipped (its siblings'), or the next look reads them again.
            self.position = look.read_to
        if look.read_to_end and look.terminal:
            reason = "gone" if look.status is None else "terminal"
            out.append(self._end(reason, look.status))
        if out:
            self._quiet_since = now
        return b"".join(out)

    def timers(self, now: float) -> bytes:
        """The end at the stream's maximum duration, or a heartbeat after a quiet while; else nothing."""
        if self.ended:
            return b""
        if now - self.opened_at >= self.max_seconds:
            return self._end("max_duration", None)
        if now - self._quiet_since >= self.heartbeat_seconds:
            self._quiet_since = now
            return comment("heartbeat")
        return b""

    def end(self, reason: str) -> bytes:
        return b"" if self.ended else self._end(reason, None)

    def _child(self, child_id: str, index: int, status: str) -> list[bytes]:
        if self._children.get(child_id) == status:
            return []
        self._children[child_id] = status
        data = {"job_id": child_id, "index": index, "status": status}
        return [frame("child", data, self.event_id)]

    def _end(self, reason: str, status: str | None) -> bytes:
        self.ended = True
        self.ticket.release()
        data = {"job_id": self.job_id, "reason": reason, "status": status}
        return frame("end", data, self.event_id)


def _summary_of(look: Look) -> dict[str, Any] | None:
    if look.status is None:
        return None
    if look.kind == JobKind.PARENT.value:
        ended = look.total - sum(look.counts.get(s, 0) for s in _ACTIVE)
        return {
            "id": look.job_id,
            "kind": look.kind,
            "status": look.status,
            "total": look.total,
            "counts": look.counts,
            "progress": ended / look.total if look.total else 0.0,
        }
    return {
        "id": look.job_id,
        "kind": look.kind,
        "status": look.status,
        "stage": look.stage or None,
        "progress": 1.0 if look.status in _TERMINAL else look.progress,
    }


# -- serving it in the request thread --------------------------------------------------------------


def in_request_thread(
    session: Session,
    client: StoreClient,
    keyspace: Keyspace,
    poll_seconds: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[bytes]:
    """The stream's body written by the thread that serves the request, when no hub can take it."""
    try:
        yield opening()
        while True:
            now = clock()
            look = Look(session.job_id, None, read_to_end=True)
            looked_from = session.position
            try:
                look = watching.look(client, keyspace, [(session.job_id, session.position)], ENTRIES_PER_LOOK)[0]
                chunk = session.take(look, now)
            except RedisError as error:
                log.warning("live stream of %s: the job store did not answer: %s", session.job_id, error)
                chunk = b""
            chunk += session.timers(now)
            if chunk:
                yield chunk
            if session.ended:
                return
            session.ticket.streams.renew_if_due()
            if look.read_to_end or session.position <= looked_from:
                sleep(poll_seconds)  # a job with more to read is read on at once, as long as reading moves
    finally:
        session.ticket.release()


# -- serving them all in one thread ------------------------------------------------------------------


@dataclass
class HandOff:
    """What the view leaves for the worker: the stream to serve, and where its looks go."""

    session: Session
    client: StoreClient
    keyspace: Keyspace
    poll_seconds: float


@dataclass
class _Connection:
    sock: socket.socket
    session: Session
    unsent: bytearray
    writing: bool = False  # registered for EVENT_WRITE too: the socket's buffer was full


class Hub:
    """The one thread of a process that serves every handed-off stream (see the module's docstring)."""

    def __init__(
        self, client: StoreClient, keyspace: Keyspace, poll_seconds: float, clock: Callable[[], float] = time.monotonic
    ):
        self.client, self.keyspace, self.poll_seconds, self.clock = client, keyspace, poll_seconds, clock
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._arriving: queue.SimpleQueue[_Connection] = queue.SimpleQueue()
        self._connections: dict[int, _Connection] = {}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ocrgw-event-streams", daemon=True)
        self._thread.start()

    @property
    def open(self) -> int:
        return len(self._connections)

    def adopt(self, sock: socket.socket, session: Session) -> None:
        """Serves ``session`` on ``sock`` (whose response head has gone out) from now on; thread-safe."""
        sock.setblocking(False)
        self._arriving.put(_Connection(sock, session, bytearray(opening())))
        self._wake()

    def stop(self, timeout: float = 2.0) -> None:
        """Ends every stream (``reason: shutdown``, so that clients reconnect elsewhere) and the thread."""
        self._stopping.set()
        self._wake()
        self._thread.join(timeout)

    def _wake(self) -> None:
        # A full buffer means the thread wakes anyway.
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._stopping.is_set()

    def _run(self) -> None:
        next_look = self.clock()
        while not self._stopping.is_set():
            try:
                for key, mask in self._selector.select(max(0.0, next_look - self.clock())):
                    if key.data is None:
                        self._drain_wake()
                    else:
                        self._on_ready(key.data, mask)
                self._take_arrivals()
                if self.clock() >= next_look:
                    behind = self._look()
                    # A job with more entries than one look reads is looked at again at once (_look says).
                    next_look = self.clock() + (0.0 if behind else self.poll_seconds)
            except Exception:
                # A bug must not leave every stream of the process hanging: log it, and serve on.
                log.exception("live streams: unexpected error; serving on")
                next_look = self.clock() + self.poll_seconds
        self._take_arrivals()  # handed over while it stopped: they end too
        for connection in list(self._connections.values()):
            connection.unsent += connection.session.end("shutdown")
            self._flush(connection)
            self._close(connection)
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_read.recv(4096):
                pass
        except BlockingIOError:
            pass

    def _take_arrivals(self) -> None:
        while True:
            try:
                connection = self._arriving.get_nowait()
            except queue.Empty:
                return
            self._connections[connection.sock.fileno()] = connection
            self._selector.register(connection.sock, selectors.EVENT_READ, connection)
            self._flush(connection)

    def _on_ready(self, connection: _Connection, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            # A client sends nothing after its request: what comes is its leaving (EOF) or bytes to ignore.
            try:
                data = connection.sock.recv(4096)
            except BlockingIOError:
                data = b"-"
            except OSError:
                data = b""
            if not data:
                self._close(connection)
                return
        if mask & selectors.EVENT_WRITE:
            self._flush(connection)

    def _look(self) -> bool:
        """Looks at every watched job and sends each stream what is new.

        True when a job had more entries than one look reads and this look
        moved its streams on: looking again at once reads the next ones.  A
        look that moved none on would read the same entries again, so it
        waits for the next poll like the others: the hub never spins.
        """
        by_job: dict[str, list[_Connection]] = {}
        for connection in self._connections.values():
            if connection.session.ended:
                continue  # it has said all it will; only its unsent bytes are left
            by_job.setdefault(connection.session.job_id, []).append(connection)
        now = self.clock()
        looks: dict[str, Look] = {}
        looked_from: dict[str, Position] = {}
        if by_job:
            looked_from = {job_id: min(c.session.position for c in group) for job_id, group in by_job.items()}
            watched = list(looked_from.items())
            try:
                looks = {
                    found.job_id: found
                    for found in watching.look(self.client, self.keyspace, watched, ENTRIES_PER_LOOK)
                }
            except RedisError as error:
                log.warning("live streams: the job store did not answer: %s", error)
        for job_id, group in by_job.items():
            found = looks.get(job_id)
            for connection in group:
                try:
                    if found is not None:
                        connection.unsent += connection.session.take(found, now)
                    connection.unsent += connection.session.timers(now)
                except Exception:
                    log.exception("live stream of %s: unexpected error; the stream is closed", job_id)
                    self._close(connection)
                    continue
                self._flush(connection)
        for streams in {
            id(c.session.ticket.streams): c.session.ticket.streams for c in self._connections.values()
        }.values():
            streams.renew_if_due()
        return any(
            not found.read_to_end and _moved_on(by_job[job_id], looked_from[job_id]) for job_id, found in looks.items()
        )

    def _flush(self, connection: _Connection) -> None:
        if connection.sock.fileno() < 0:
            return
        try:
            while connection.unsent:
                sent = connection.sock.send(connection.unsent)
                del connection.unsent[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self._close(connection)
            return
        if connection.unsent and len(connection.unsent) > MAX_UNSENT_BYTES:
            log.info("live stream of %s: the client reads too slowly; dropped", connection.session.job_id)
            self._close(connection)
            return
        if not connection.unsent and connection.session.ended:
            self._close(connection, finished=True)
            return
        writing = bool(connection.unsent)
        if writing != connection.writing:
            connection.writing = writing
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if writing else 0)
            self._selector.modify(connection.sock, events, connection)

    def _close(self, connection: _Connection, finished: bool = False) -> None:
        connection.session.ticket.release()
        fileno = connection.sock.fileno()
        if fileno >= 0:
            self._connections.pop(fileno, None)
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(connection.sock)
            if finished:
                with contextlib.suppress(OSError):
                    connection.sock.shutdown(socket.SHUT_WR)  # the body ends with the connection
            connection.sock.close()


def _moved_on(group: list[_Connection], looked_from: Position) -> bool:
    """Whether every stream of a job still to be served is past where the job's look read from."""
    going_on = [c.session.position for c in group if not c.session.ended and c.sock.fileno() >= 0]
    return bool(going_on) and min(going_on) > looked_from


_hub: Hub | None = None
_hub_lock = threading.Lock()


def hub_for(hand_off: HandOff) -> Hub:
    """This process's hub, started by the first stream handed to it."""
    global _hub
    with _hub_lock:
        if _hub is None or not _hub.alive:
            _hub = Hub(hand_off.client, hand_off.keyspace, hand_off.poll_seconds)
        return _hub


def stop_hub() -> None:
    """Ends the streams of this process's hub, if it has one (a worker that stops)."""
    global _hub
    with _hub_lock:
        hub, _hub = _hub, None
    if hub is not None:
        hub.stop()


def session_for(job_id: str, position: Position, ticket: Ticket, settings: Settings) -> Session:
    return Session(
        job_id,
        position,
        ticket,
        opened_at=time.monotonic(),
        heartbeat_seconds=settings.stream_heartbeat_seconds,
        max_seconds=settings.stream_max_seconds,
    )

"""One webhook POST: the signatures, the address check, the request and what its answer means.

The request goes out through ``http.client`` rather than a client that
follows redirects or reads proxy settings: a redirect could lead a webhook
to an address the policy refuses, so a 3xx is a failed attempt.  The host
name is resolved here and every address it has is checked against the
policy (``jobs.webhook_urls``) before the connection is made to one of
those very addresses, so a name cannot pass the check and then resolve
elsewhere (DNS rebinding).  TLS still verifies the certificate against the
name, and the Host header carries it.

An attempt has one deadline, ``OCRGW_WEBHOOK_TIMEOUT`` after it starts, for
resolving the host name, connecting, TLS, sending and reading the status and
headers together (the body of the answer is never read): a name whose
resolver never answers fails the attempt as a timeout at the deadline, like
a receiver that never answers.  A socket timeout alone bounds each read,
and a receiver answering a byte at a time would hold a deliverer's thread
for as long as it liked.  What an attempt records says what failed or was
refused, never which address the host name resolved to; the log says more.

A lookup the deadline gave up on still runs, in its thread, until the
resolver gives up too, so the threads are counted (``LOOKUPS``): a process
runs at most ``LOOKUP_THREADS`` lookups at once, and one tenant's callbacks
at most ``LOOKUP_THREADS_PER_TENANT`` of them.  An attempt that would need
one more fails at once as a timeout, and is retried like any other; a
tenant whose name server never answers so holds a few threads of its own,
and leaves the others to everyone else.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any

from jobs import webhook_urls
from jobs.contract import WebhookErrorCode
from jobs.webhook_secrets import signing_key
from jobs.webhook_urls import InvalidCallbackUrl, IPAddress, Target
from jobs.webhooks import Answer

SIGNATURE_HEADER = "X-Ocrgw-Signature"
ATTEMPT_HEADER = "X-Ocrgw-Attempt"
# Standard Webhooks (https://www.standardwebhooks.com), which its libraries verify.
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
USER_AGENT = "ocrgw-webhooks/1"


#: The ``error_code`` of a failed attempt, as its event records it; declared with the API's other codes.
AttemptError = WebhookErrorCode


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` keyed with the secret's text."""
    signed = str(timestamp).encode() + b"." + body
    return f"t={timestamp},v1={hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()}"


def standard_signature(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    """Standard Webhooks' ``v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def headers(body: bytes, attempt: int, secret: str, timestamp: int, message_id: str) -> dict[str, str]:
    """The request's headers: Standard Webhooks' (``webhook-id``, ``-timestamp``, ``-signature``) and
    ocrgw's own (``X-Ocrgw-Signature``, ``X-Ocrgw-Attempt``); without a secret, no signature."""
    out = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        ATTEMPT_HEADER: str(attempt),
        ID_HEADER: message_id,
        TIMESTAMP_HEADER: str(timestamp),
    }
    if secret:
        out[SIGNATURE_HEADER] = signature(secret, body, timestamp)
        out[STANDARD_SIGNATURE_HEADER] = standard_signature(signing_key(secret), message_id, timestamp, body)
    return out


def post(
    url: str,
    body: bytes,
    request_headers: Mapping[str, str],
    *,
    timeout: float,
    allow_private: bool,
    tenant: str = "",
) -> Answer:
    """POSTs ``body`` to ``url`` once; never raises for anything the network or the receiver does.

    Resolving the host name, connecting, TLS, sending and the answer's status
    and headers all end within ``timeout`` seconds together, or the attempt
    fails as a timeout.  ``tenant``: whose webhook it is, whose share of the
    lookup threads its host name's lookup takes.
    """
    try:
        target = webhook_urls.parse(url)
    except InvalidCallbackUrl as error:
        return Answer(None, AttemptError.INVALID_URL, str(error))
    with Deadline(timeout) as deadline:
        try:
            addresses = resolve(target, deadline, tenant)
        except LookupsBusy as busy:
            return Answer(None, AttemptError.TIMEOUT, LOOKUPS_BUSY_ERROR, detail=f"{target.host}: {busy}")
        except ResolutionTimedOut:
            return Answer(
                None,
                AttemptError.TIMEOUT,
                f"the host name did not resolve within {deadline.seconds:g} s",
                detail=f"{target.host} did not resolve within {deadline.seconds:g} s",
            )
        except (socket.gaierror, UnicodeError) as error:
            return Answer(
                None, AttemptError.UNRESOLVABLE, UNRESOLVABLE_ERROR, detail=f"{target.host} does not resolve: {error}"
            )
        if not allow_private:
            refused = _refused(target, addresses)
            if refused is not None:
                return refused
        return _exchange(target, addresses, body, request_headers, deadline)


UNRESOLVABLE_ERROR = "the callback's host name does not resolve"
# The same words whether the tenant's share or the process's was taken: the latter is other tenants' doing.
LOOKUPS_BUSY_ERROR = "the host name was not looked up: earlier lookups have not ended yet"
# A deliverer's own failure is recorded in these words only: its exception could name ocrgw's hosts.
INTERNAL_ERROR = "the deliverer failed; see its log"
REFUSED_ERROR = "callback address refused: not a public address"


def _refused(target: Target, addresses: list[IPAddress]) -> Answer | None:
    """A refusal if any address of the host is one the policy refuses; it names none of them."""
    for address in addresses:
        reason = webhook_urls.refusal(address)
        if reason is not None:
            detail = (
                f"{target.host} resolves to a {reason} address ({address}); OCRGW_WEBHOOK_ALLOW_PRIVATE=1 allows it"
            )
            return Answer(None, AttemptError.PRIVATE_ADDRESS, REFUSED_ERROR, detail=detail)
    return None


def _exchange(
    target: Target, addresses: list[IPAddress], body: bytes, request_headers: Mapping[str, str], deadline: Deadline
) -> Answer:
    """Connects, sends and reads the status and headers, all before the deadline."""
    connection, refused = _connect(target, addresses, deadline)
    if connection is None:
        return refused
    try:
        connection.request("POST", target.path, body=body, headers=dict(request_headers))
        response = connection.getresponse()
        status, location = response.status, response.getheader("Location")
        if deadline.passed:
            # The deadline shut the socket mid-answer: what was read ended there, not where the receiver ended it.
            raise TimeoutError("the attempt's deadline passed")
    except (http.client.HTTPException, OSError) as error:
        if deadline.passed or isinstance(error, TimeoutError):
            return Answer(None, AttemptError.TIMEOUT, f"no complete answer within {deadline.seconds:g} s")
        if isinstance(error, http.client.HTTPException):
            return Answer(None, AttemptError.BAD_RESPONSE, f"not an HTTP answer: {error!r}")
        return Answer(None, AttemptError.CONNECTION_FAILED, f"the connection failed: {_reason(error)}")
    finally:
        connection.close()  # the answer's body is not needed, nor read
    return answer_to(status, location)


def answer_to(status: int, location: str | None = None) -> Answer:
    """What a receiver's status means for the attempt."""
    if 200 <= status < 300:
        return Answer(status)
    if 300 <= status < 400:
        return Answer(
            status, AttemptError.REDIRECT, f"answered {status} to {location or 'nowhere'}; redirects are not followed"
        )
    return Answer(status, AttemptError.HTTP_ERROR, f"answered {status}")


class ResolutionTimedOut(TimeoutError):
    """Raised when the system resolver has not answered for a host name by the attempt's deadline."""


class LookupsBusy(ResolutionTimedOut):
    """Raised when a lookup would take a thread past the process's bound or the tenant's share."""


#: How many host name lookups a process runs at once, each in a thread of its own.
LOOKUP_THREADS = 32
#: How many of those one tenant's callbacks may hold: a name server that never answers holds them.
LOOKUP_THREADS_PER_TENANT = 4


class LookupThreads:
    """The lookups running in a process, counted in all and per tenant, each below its bound.

    A slot is taken before a lookup's thread starts and given back by the
    thread itself when ``getaddrinfo`` returns, however long after the
    attempt's deadline that is.
    """

    def __init__(self, size: int = LOOKUP_THREADS, per_tenant: int = LOOKUP_THREADS_PER_TENANT):
        self.size = size
        self.per_tenant = per_tenant
        self._running: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, tenant: str) -> None:
        """Takes a slot for ``tenant``, or raises ``LookupsBusy``."""
        with self._lock:
            if self._running.get(tenant, 0) >= self.per_tenant:
                raise LookupsBusy(f"{self.per_tenant} lookups of the tenant's callbacks are still running")
            if sum(self._running.values()) >= self.size:
                raise LookupsBusy(f"{self.size} lookups are still running in this process")
            self._running[tenant] = self._running.get(tenant, 0) + 1

    def give_back(self, tenant: str) -> None:
        with self._lock:
            left = self._running.get(tenant, 0) - 1
            if left > 0:
                self._running[tenant] = left
            else:
                self._running.pop(tenant, None)

    def running(self, tenant: str | None = None) -> int:
        """How many lookups are running: a tenant's, or all."""
        with self._lock:
            return sum(self._running.values()) if tenant is None else self._running.get(tenant, 0)


#: This process's lookups.
LOOKUPS = LookupThreads()


def resolve(target: Target, deadline: Deadline | None = None, tenant: str = "") -> list[IPAddress]:
    """Every address of the target's host, in the resolver's order (an IP literal is its own).

    With a ``deadline``, a name's lookup ends by it or raises
    ``ResolutionTimedOut``.  ``getaddrinfo`` takes no timeout of its own (a
    resolver that never answers holds it for the resolver's own timeouts,
    ``resolv.conf``'s, and a receiver's own name server can be made never to
    answer), so the lookup runs in a thread of its own and the attempt waits
    for it only until the deadline: a lookup still running then is left to
    end in its thread, by those timeouts, holding nothing of the attempt's
    but its slot in ``LOOKUPS`` (``LookupsBusy`` when ``tenant``'s share or
    the process's is taken).  An IP literal needs no lookup and gets no
    thread.
    """
    if deadline is None or _is_literal(target.host):
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    else:
        infos = _Lookup(target, tenant).within(deadline)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class _Lookup:
    """One ``getaddrinfo`` call in a daemon thread, which the attempt waits for until its deadline."""

    def __init__(self, target: Target, tenant: str):
        self.target = target
        self.tenant = tenant
        self.slots = LOOKUPS
        self.done = threading.Event()
        self.infos: list[Any] = []
        self.error: BaseException | None = None

    def within(self, deadline: Deadline) -> list[Any]:
        self.slots.take(self.tenant)
        try:
            thread = threading.Thread(target=self._run, name=f"webhook-lookup {self.target.host}", daemon=True)
            thread.start()
        except BaseException:
            self.slots.give_back(self.tenant)
            raise
        if not self.done.wait(max(deadline.left(), 0.0)):
            raise ResolutionTimedOut(f"{self.target.host} did not resolve within {deadline.seconds:g} s")
        if self.error is not None:
            raise self.error
        return self.infos

    def _run(self) -> None:
        try:
            self.infos = socket.getaddrinfo(self.target.host, self.target.port, type=socket.SOCK_STREAM)
        except BaseException as error:  # handed to the attempt, which raises it in its own thread
            self.error = error
        finally:
            self.slots.give_back(self.tenant)
            self.done.set()


def _connect(
    target: Target, addresses: list[IPAddress], deadline: Deadline
) -> tuple[http.client.HTTPConnection | None, Answer]:
    """A connection to the first of ``addresses`` that takes one before the deadline; else why none did.

    What the answer records names no address (a client could learn where an
    internal name leads); the detail, for the log, does.
    """
    failure = Answer(None, AttemptError.CONNECTION_FAILED, "the host has no address")
    for address in addresses:
        connection = _connection(target, address, deadline)
        try:
            connection.connect()
            return connection, failure
        except OSError as error:  # ssl.SSLError and TimeoutError among them
            if deadline.passed or isinstance(error, TimeoutError):
                failure = Answer(
                    None,
                    AttemptError.TIMEOUT,
                    f"no connection within {deadline.seconds:g} s",
                    detail=f"no connection to {address} within {deadline.seconds:g} s",
                )
            else:
                failure = Answer(
                    None,
                    AttemptError.CONNECTION_FAILED,
                    f"could not connect: {_reason(error)}",
                    detail=f"could not connect to {address}: {error}",
                )
        connection.close()
        if deadline.passed:
            break
    return None, failure


def _reason(error: OSError) -> str:
    """What went wrong, in words that name no address."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS certificate not valid: {error.verify_message}"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed: {error.reason or type(error).__name__}"
    return error.strerror or type(error).__name__


def _connection(target: Target, address: IPAddress, deadline: Deadline) -> http.client.HTTPConnection:
    """A connection that names the target's host (Host header, TLS) but connects to ``address``.

    Its socket is the deadline's to shut down: each read or write also times
    out on its own (at what was left of the deadline when it connected), but
    only the deadline bounds a receiver that keeps answering a byte at a time.
    """
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = http.client.HTTPSConnection(
            target.host, target.port, timeout=deadline.seconds, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=deadline.seconds)

    def to_checked_address(_where, _timeout, source_address=None):
        left = deadline.left()
        if left <= 0:
            raise TimeoutError("the attempt's deadline passed")
        sock = socket.create_connection((str(address), target.port), left, source_address)
        # A duplicate of its descriptor: TLS detaches ``sock`` (its fd becomes -1) into the socket it wraps,
        # and shutting the duplicate down shuts the connection they share.
        deadline.watch(sock.dup())
        return sock

    connection._create_connection = to_checked_address  # type: ignore[attr-defined]
    return connection


class Deadline:
    """The end of one attempt: when it passes, every socket the attempt opened is shut down.

    A blocked connect, TLS handshake, send or read then returns at once, so
    an attempt never holds its thread past the deadline, however its
    receiver dribbles.  The timer's thread is cancelled when the attempt
    ends first.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()

    def left(self) -> float:
        return self.ends_at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        """Shuts ``sock`` down when the deadline passes, and closes it when the attempt ends (it is the
        attempt's own descriptor of the connection, a duplicate, so closing it leaves the connection open)."""
        with self._lock:
            self._sockets.append(sock)
            if self.passed:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already, or never connected
        sock.shutdown(socket.SHUT_RDWR)

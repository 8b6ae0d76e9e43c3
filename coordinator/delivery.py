"""One webhook POST: the signature, the address check, the request and what its answer means.

The request goes out through ``http.client`` rather than a client that
follows redirects or reads proxy settings: a redirect could lead a webhook
to an address the policy refuses, so a 3xx is a failed attempt.  The host
name is resolved here and every address it has is checked against the
policy (``jobs.webhook_urls``) before the connection is made to one of
those very addresses, so a name cannot pass the check and then resolve
elsewhere (DNS rebinding).  TLS still verifies the certificate against the
name, and the Host header carries it.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
from collections.abc import Mapping

from jobs import webhook_urls
from jobs.webhook_urls import InvalidCallbackUrl, IPAddress, Target
from jobs.webhooks import Answer

SIGNATURE_HEADER = "X-Ocrgw-Signature"
ATTEMPT_HEADER = "X-Ocrgw-Attempt"
USER_AGENT = "ocrgw-webhooks/1"


class AttemptError:
    """The ``error_code`` of a failed attempt, as its event records it."""

    INVALID_URL = "invalid_callback_url"  # the stored URL fails the policy's parse (stored before it existed)
    PRIVATE_ADDRESS = "private_address"  # the host resolves to an address the policy refuses
    UNRESOLVABLE = "unresolvable"  # the host name does not resolve
    CONNECTION_FAILED = "connection_failed"  # no address accepted a connection, or TLS failed
    TIMEOUT = "timeout"  # no connection or no answer within OCRGW_WEBHOOK_TIMEOUT
    BAD_RESPONSE = "bad_response"  # the answer was not HTTP
    REDIRECT = "redirect"  # a 3xx: redirects are not followed
    HTTP_ERROR = "http_error"  # any other status outside 2xx
    INTERNAL_ERROR = "internal_error"  # the deliverer failed before the request went out (a bug; logged)


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` keyed with the secret."""
    signed = str(timestamp).encode() + b"." + body
    return f"t={timestamp},v1={hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()}"


def headers(body: bytes, attempt: int, secret: str, timestamp: int) -> dict[str, str]:
    out = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        ATTEMPT_HEADER: str(attempt),
    }
    if secret:
        out[SIGNATURE_HEADER] = signature(secret, body, timestamp)
    return out


def post(url: str, body: bytes, request_headers: Mapping[str, str], *, timeout: float, allow_private: bool) -> Answer:
    """POSTs ``body`` to ``url`` once; never raises for anything the network or the receiver does."""
    try:
        target = webhook_urls.parse(url)
    except InvalidCallbackUrl as error:
        return Answer(None, AttemptError.INVALID_URL, str(error))
    try:
        addresses = resolve(target)
    except (socket.gaierror, UnicodeError) as error:
        return Answer(None, AttemptError.UNRESOLVABLE, f"{target.host} does not resolve: {error}")
    if not allow_private:
        for address in addresses:
            reason = webhook_urls.refusal(address)
            if reason is not None:
                return Answer(
                    None,
                    AttemptError.PRIVATE_ADDRESS,
                    f"{target.host} resolves to a {reason} address ({address}); "
                    "OCRGW_WEBHOOK_ALLOW_PRIVATE=1 allows it",
                )
    connection, refused = _connect(target, addresses, timeout)
    if connection is None:
        return refused
    try:
        connection.request("POST", target.path, body=body, headers=dict(request_headers))
        response = connection.getresponse()
        status, location = response.status, response.getheader("Location")
    except TimeoutError:
        return Answer(None, AttemptError.TIMEOUT, f"no answer within {timeout:g} s")
    except http.client.HTTPException as error:
        return Answer(None, AttemptError.BAD_RESPONSE, f"not an HTTP answer: {error!r}")
    except OSError as error:
        return Answer(None, AttemptError.CONNECTION_FAILED, f"the connection failed: {error}")
    finally:
        connection.close()  # the answer's body is not needed
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


def resolve(target: Target) -> list[IPAddress]:
    """Every address of the target's host, in the resolver's order (an IP literal is its own)."""
    infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _connect(
    target: Target, addresses: list[IPAddress], timeout: float
) -> tuple[http.client.HTTPConnection | None, Answer]:
    """A connection to the first of ``addresses`` that takes one; else why none did."""
    failure = Answer(None, AttemptError.CONNECTION_FAILED, f"{target.host} has no address")
    for address in addresses:
        connection = _connection(target, address, timeout)
        try:
            connection.connect()
            return connection, failure
        except TimeoutError:
            failure = Answer(None, AttemptError.TIMEOUT, f"no connection to {address} within {timeout:g} s")
        except (OSError, ssl.SSLError) as error:
            failure = Answer(None, AttemptError.CONNECTION_FAILED, f"could not connect to {address}: {error}")
        connection.close()
    return None, failure


def _connection(target: Target, address: IPAddress, timeout: float) -> http.client.HTTPConnection:
    """A connection that names the target's host (Host header, TLS) but connects to ``address``."""
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = http.client.HTTPSConnection(
            target.host, target.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout)

    def to_checked_address(_where, conn_timeout, source_address=None):
        return socket.create_connection((str(address), target.port), conn_timeout, source_address)

    connection._create_connection = to_checked_address  # type: ignore[attr-defined]
    return connection

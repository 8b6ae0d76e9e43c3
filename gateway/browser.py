"""What the gateway tells a browser about each answer, which ``Host`` it answers to, and whose pages may
change anything.

The dashboard (``/ui``) keeps a user's API key in the tab's ``sessionStorage``,
on the gateway's own origin, beside the API, the manual and Swagger UI.  So no
answer may run a script there that the gateway did not write, nor be framed by
another site, nor be read as another type than the one it names:

- every answer carries ``X-Content-Type-Options: nosniff``, ``Referrer-Policy:
  no-referrer`` and a ``Content-Security-Policy`` with ``frame-ancestors
  'none'``;
- an answer that is not a page (the API's JSON, a result's text, a problem)
  gets ``default-src 'none'``: nothing in it loads or runs;
- a page (the dashboard's, the manual's, Swagger UI) loads scripts, styles and
  images from the gateway only, and runs an inline script only if it is the
  page's own: the policy names each inline script of the page by its sha256
  (``page_policy``), so a script added to the page on its way out (an
  injection) has no hash and does not run.  The dashboard has no inline script
  nor style at all; the manual and Swagger UI, which are made by other tools,
  may set inline styles;
- a route that serves a document a browser could run (hOCR is XHTML) sets its
  own, stricter policy (``SANDBOXED_DOCUMENT``), which this module keeps.

``Host`` is checked against ``OCRGW_ALLOWED_HOSTS`` before anything else (an
API key included): a page on another site that has its own name resolve to
the gateway's address (DNS rebinding) reaches it under that name, and is
refused with ``400 host_not_allowed``.  An IP address is always accepted, as
no name is involved, and so are the probes and ``/metrics``, whichever ``Host``
they name (an orchestrator probes a container by its address, Prometheus
scrapes a target by the name it was given).  Without the setting the
gateway answers to ``localhost`` (and its subdomains) and to this machine's
own names, which covers a start on one machine (``ocrgw up``).

A request that changes something (``POST``, ``PUT``, ``PATCH``, ``DELETE``)
is then refused with ``403 cross_site_request`` if a browser says a page of
another site sent it: an ``Origin`` that is not the request's own, or
``Sec-Fetch-Site: cross-site``.  The JSON type a body must have keeps a page
from sending a JSON job without a preflight, but not a raw ``text/plain``
document nor a control with no body at all; a browser sends ``Origin`` with
every one of those (``no-cors`` included), and a program sends neither
header, so the CLI and curl are not affected.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import re
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from flask import Flask, Response, request

from gateway.problems import Problem

#: An answer that is not a page: nothing in it may load, run or be framed.
NOT_A_PAGE = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#: A document of the user's (hOCR): shown, never run, and on no origin at all (``sandbox``: an opaque one).
SANDBOXED_DOCUMENT = "sandbox; default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
#: Sent with every answer.
ALWAYS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
CSP = "Content-Security-Policy"
#: The pages whose inline styles (set by tools outside the project) are allowed: the manual and Swagger UI.
_STYLED_ENDPOINTS = frozenset({"manual", "api-docs.openapi_swagger_ui"})
#: Answered to any Host: the probes, which an orchestrator sends to a container's address or name, and the
#: metrics, which Prometheus scrapes by a target's name (``gw1:8000``); none carries a job's data or changes
#: anything, so a page that reaches them under a name of its own learns nothing of a tenant's.
PROBE_ENDPOINTS = frozenset({"api.healthz", "api.readyz", "metrics"})
#: The methods that change something, which a page of another site may not send (``check_origin``).
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Any host at all: the check is left to a proxy in front.
ANY_HOST = "*"
#: What the gateway answers to without ``OCRGW_ALLOWED_HOSTS`` (besides any IP address and this machine's names).
LOCAL_HOSTS = ("localhost", ".localhost")

_INLINE_SCRIPT = re.compile(rb"<script(?P<attributes>[^>]*)>(?P<body>.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_TYPE_ATTRIBUTE = re.compile(rb"""\btype\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_SRC_ATTRIBUTE = re.compile(rb"\bsrc\s*=", re.IGNORECASE)
# The script types a browser runs; any other (a JSON data block) is data, and needs no hash.
_RUN_TYPES = frozenset({b"", b"text/javascript", b"application/javascript", b"module"})
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*")


def page_policy(html: bytes, *, inline_styles: bool = False) -> str:
    """The policy of a page: its resources from the gateway, its own inline scripts by hash, and no framing."""
    hashes = " ".join(f"'sha256-{digest}'" for digest in inline_script_hashes(html))
    scripts = f"'self' {hashes}" if hashes else "'self'"
    styles = "'self' 'unsafe-inline'" if inline_styles else "'self'"
    return (
        f"default-src 'self'; script-src {scripts}; style-src {styles}; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def inline_script_hashes(html: bytes) -> list[str]:
    """The base64 sha256 of each inline script a browser would run, in order, each once."""
    digests: list[str] = []
    for script in _INLINE_SCRIPT.finditer(html):
        attributes = script.group("attributes")
        if _SRC_ATTRIBUTE.search(attributes):
            continue
        declared = _TYPE_ATTRIBUTE.search(attributes)
        if (declared.group(1).lower() if declared else b"") not in _RUN_TYPES:
            continue
        digest = base64.b64encode(hashlib.sha256(script.group("body")).digest()).decode()
        if digest not in digests:
            digests.append(digest)
    return digests


def protect(response: Response) -> Response:
    """Adds the headers above to an answer; a policy its route set stays."""
    for name, value in ALWAYS.items():
        response.headers.setdefault(name, value)
    if CSP not in response.headers:
        response.headers[CSP] = _policy_of(response)
    return response


def _policy_of(response: Response) -> str:
    if response.mimetype != "text/html" or response.direct_passthrough:
        # A file sent as it is (a page the manual sends sets its own policy) is not read here.
        return NOT_A_PAGE
    return page_policy(response.get_data(), inline_styles=request.endpoint in _STYLED_ENDPOINTS)


# -- Host -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllowedHosts:
    """The names the gateway answers to: exact names, ``.domain`` for a domain and its subdomains, ``*`` for any."""

    names: frozenset[str]
    domains: tuple[str, ...]  # each with its leading dot
    any: bool = False

    @classmethod
    def of(cls, patterns: Iterable[str]) -> AllowedHosts:
        patterns = [normalized(pattern) for pattern in patterns]
        return cls(
            names=frozenset(p for p in patterns if not p.startswith(".") and p != ANY_HOST),
            domains=tuple(p for p in patterns if p.startswith(".")),
            any=ANY_HOST in patterns,
        )

    def allow(self, host: str) -> bool:
        if self.any or is_ip_address(host) or host in self.names:
            return True
        return any(host == domain[1:] or host.endswith(domain) for domain in self.domains)


def default_hosts() -> tuple[str, ...]:
    """``LOCAL_HOSTS`` and this machine's names (host name and fully qualified name), as ``ocrgw up`` is reached."""
    own = {socket.gethostname(), socket.getfqdn()}
    return (*LOCAL_HOSTS, *sorted(normalized(name) for name in own if name))


def normalized(name: str) -> str:
    """A host name as compared: lower case, without a trailing dot, an IPv6 address without brackets."""
    name = name.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name


def is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_of(header: str) -> str | None:
    """The host named by a ``Host`` header (``name``, ``name:port``, ``v4:port``, ``[v6]:port``); None if it
    names none (several values joined, a user part, characters no host name has)."""
    header = header.strip()
    if header.startswith("["):
        address, bracket, rest = header[1:].partition("]")
        if not bracket or (rest and not _is_port(rest)):
            return None
        return address.lower() if ":" in address and is_ip_address(address) else None
    name, colon, port = header.rpartition(":") if ":" in header else (header, "", "")
    if colon and not _is_port(colon + port):
        return None
    name = normalized(name)
    if is_ip_address(name) and ":" not in name:
        return name
    return name if len(name) <= 253 and _HOST_NAME.fullmatch(name) else None


def _is_port(text: str) -> bool:
    return text.startswith(":") and text[1:].isdigit() and len(text) <= 6


def check_host(allowed: AllowedHosts) -> None:
    """``400 host_not_allowed`` unless the request's ``Host`` names an allowed host."""
    header = request.headers.get("Host")
    if header is None or allowed.any:
        return  # HTTP/1.0 without a Host: no name was asked for
    host = host_of(header)
    if host is None:
        raise Problem("host_not_allowed", "The Host header does not name one host.")
    if not allowed.allow(host):
        raise Problem(
            "host_not_allowed",
            f"This gateway does not answer to the host {host!r}: its operator lists the names it answers to "
            "in OCRGW_ALLOWED_HOSTS.",
        )


# -- Origin -----------------------------------------------------------------------------------------


def check_origin() -> None:
    """``403 cross_site_request`` for a request that changes something and that a browser says a page of
    another site sent: an ``Origin`` that is not the request's own, or ``Sec-Fetch-Site: cross-site``."""
    if request.method not in UNSAFE_METHODS:
        return
    if request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
        raise Problem("cross_site_request", "A browser sent this request from a page of another site.")
    origin = request.headers.get("Origin")
    if origin is not None and not is_own_origin(origin, request.headers.get("Host"), request.scheme):
        raise Problem(
            "cross_site_request",
            f"A browser sent this request from a page of another origin ({origin.strip()[:100]!r}); the gateway "
            "takes changes from its own pages and from clients that are not browsers only.",
        )


def is_own_origin(origin: str, host_header: str | None, scheme: str) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) is the origin the request was sent to.

    Its host and port are the ``Host`` header's, to the letter: a browser writes both from the one URL, and
    each leaves out the scheme's default port.  Its scheme is the request's, or ``https`` where the gateway
    was reached by ``http``: a proxy in front that ends TLS passes an https page's request on as http.
    ``null`` (a sandboxed frame, a ``data:`` page) is no one's origin.
    """
    if host_header is None:
        return False
    origin_scheme, separator, authority = origin.strip().lower().partition("://")
    return bool(separator) and origin_scheme in {scheme, "https"} and authority == host_header.strip().lower()


def install(app: Flask, allowed_hosts: Sequence[str]) -> AllowedHosts:
    """Checks each request's Host, then its Origin, before anything else, and adds the headers above to
    every answer.

    ``allowed_hosts``: ``OCRGW_ALLOWED_HOSTS``; empty, the defaults (``default_hosts``).
    """
    allowed = AllowedHosts.of(allowed_hosts or default_hosts())

    @app.before_request
    def refuse_other_hosts_and_sites() -> None:
        if request.endpoint not in PROBE_ENDPOINTS:
            check_host(allowed)
        check_origin()

    app.after_request(protect)
    return allowed

"""Which callback URLs ocrgw POSTs to: the policy the gateway applies at submission and the
deliverer applies again to the addresses a host name resolves to.

A webhook is a request ocrgw makes on a client's behalf, so without a policy
any client could make it reach what only ocrgw's own network can: Redis, a
cloud metadata service, an admin page on localhost.  So only ``http`` and
``https`` URLs with a host are taken, and an address that is not globally
routable (loopback, private, link-local, unique-local, unspecified, shared,
multicast, reserved), or an IPv6 address that carries such an IPv4 address
(or is a 6to4 or Teredo one), is refused unless ``OCRGW_WEBHOOK_ALLOW_PRIVATE=1``.

At submission only what the URL itself says is checked (an IP literal, in
any spelling ``inet_aton`` takes, and ``localhost``): resolving names there
would put a DNS lookup on every POST, and its answer could change before
delivery anyway.  The deliverer resolves the name, refuses if any address
it gets is refused, and connects to the address it checked.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from jobs.errors import OcrgwError

MAX_URL_CHARS = 2048
SCHEMES = {"http": 80, "https": 443}
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# What inet_aton takes besides dotted quads: 2130706433, 0x7f.1, 0177.0.0.1.
_LEGACY_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")
_UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f]")


class InvalidCallbackUrl(OcrgwError, ValueError):
    """Raised when a callback URL is not one ocrgw may POST to."""

    code = "invalid_callback_url"


@dataclass(frozen=True)
class Target:
    """Where a webhook goes: ``https://example.com:8443/hook?x=1`` in parts."""

    scheme: str
    host: str  # a name (IDNA-encoded, lower case) or an IP literal without brackets
    port: int
    path: str  # path and query, at least "/"


def parse(url: str) -> Target:
    """The parts of ``url``; ``InvalidCallbackUrl`` unless it is an http(s) URL with a host."""
    if not isinstance(url, str) or not url:
        raise InvalidCallbackUrl("callback_url must be a non-empty string.")
    if len(url) > MAX_URL_CHARS:
        raise InvalidCallbackUrl(f"callback_url is longer than {MAX_URL_CHARS} characters.")
    if _UNSAFE_CHARS.search(url):
        raise InvalidCallbackUrl("callback_url contains whitespace or control characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port or bracketed host raises only when read)
    except ValueError as error:
        raise InvalidCallbackUrl(f"callback_url is not a URL: {error}.") from None
    if parts.scheme not in SCHEMES:
        raise InvalidCallbackUrl("callback_url must be an http:// or https:// URL.")
    if parts.username is not None or parts.password is not None:
        raise InvalidCallbackUrl("callback_url must not carry credentials; webhooks are signed instead.")
    host = parts.hostname
    if not host:
        raise InvalidCallbackUrl("callback_url has no host.")
    try:
        port = parts.port or SCHEMES[parts.scheme]
    except ValueError:
        raise InvalidCallbackUrl("callback_url has an invalid port.") from None
    if _literal_address(host) is None:
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise InvalidCallbackUrl("callback_url has an invalid host name.") from None
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port, path)


def refusal(address: IPAddress) -> str | None:
    """Why a webhook may not go to ``address`` (unless private addresses are allowed), or None.

    An IPv6 address that carries an IPv4 one reaches that IPv4 address through
    a translator or a tunnel, so it is refused for what it carries: 6to4
    (2002::/16) and Teredo (2001::/32) always (deprecated tunnels, whose relays
    reach whatever the address names), the others (IPv4-mapped and -compatible,
    NAT64's 64:ff9b::/96, an ISATAP interface id) when their IPv4 address is.
    An IPv4-mapped or a NAT64 address that carries a public IPv4 address is
    that address, and taken: an IPv6-only network's DNS64 answers an IPv4-only
    receiver's name with one.  The others are then judged as IPv6 addresses
    too (an IPv4-compatible one is reserved: deprecated, routed nowhere).
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address in _SIX_TO_FOUR:
            return "6to4"
        if address.teredo is not None:
            return "Teredo"
        carried = _embedded_ipv4(address)
        if carried is not None:
            reason = _own_refusal(carried)
            if reason is not None or address.ipv4_mapped is not None or address in _NAT64:
                return reason
    return _own_refusal(address)


def _own_refusal(address: IPAddress) -> str | None:
    for reason, applies in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        ("not globally routable", not address.is_global),
    ):
        if applies:
            return reason
    return None


_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# An ISATAP interface id: 0000:5efe or 0200:5efe, then the IPv4 address (RFC 5214).
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``address`` embeds in its last 32 bits, if it is of a kind that does."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64:
        return low
    # :: and ::1 are compatible in form only, and refused as themselves.
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return low
    if (int(address) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        return low
    return None


def check_submitted(url: str, allow_private: bool) -> str:
    """``url`` if a client may submit it; else ``InvalidCallbackUrl`` saying why."""
    target = parse(url)
    if allow_private:
        return url
    if target.host == "localhost" or target.host.endswith(".localhost"):
        raise InvalidCallbackUrl("callback_url names localhost, a loopback address.")
    address = _literal_address(target.host)
    reason = refusal(address) if address is not None else None
    if reason is not None:
        raise InvalidCallbackUrl(f"callback_url names a {reason} address ({address}).")
    return url


def _literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, if it is an IP literal (inet_aton's forms included)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _LEGACY_IPV4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None

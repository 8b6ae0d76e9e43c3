"""The callback URL policy: which URLs a client may submit, and which addresses a webhook may reach."""

from __future__ import annotations

import ipaddress

import pytest

from jobs.webhook_urls import MAX_URL_CHARS, InvalidCallbackUrl, Target, check_submitted, parse, refusal


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://example.com/hook", Target("https", "example.com", 443, "/hook")),
        ("http://Example.COM:8080/a/b?x=1&y=2", Target("http", "example.com", 8080, "/a/b?x=1&y=2")),
        ("https://example.com", Target("https", "example.com", 443, "/")),
        ("http://[2001:db8::1]:9000/h", Target("http", "2001:db8::1", 9000, "/h")),
        ("https://bücher.example/h", Target("https", "xn--bcher-kva.example", 443, "/h")),
    ],
)
def test_an_http_url_with_a_host_is_parsed_into_its_target(url, target):
    assert parse(url) == target


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com/hook", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("javascript:alert(1)", "http:// or https://"),
        ("example.com/hook", "http:// or https://"),
        ("http:///nohost", "no host"),
        ("http://user:pw@example.com/", "credentials"),
        ("http://example.com:99999/", "not a URL"),
        ("http://example.com:x/", "not a URL"),
        ("http://[::1", "not a URL"),
        ("http://exa mple.com/", "whitespace"),
        ("http://example.com/\r\nX-Injected: 1", "whitespace or control"),
        ("", "non-empty"),
        ("http://example.com/" + "a" * MAX_URL_CHARS, "longer than"),
    ],
)
def test_anything_else_is_refused_saying_why(url, why):
    with pytest.raises(InvalidCallbackUrl, match=why) as caught:
        parse(url)
    assert caught.value.code == "invalid_callback_url"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata services live here
        ("fe80::1", "link-local"),
        ("fd12:3456::1", "private"),  # unique-local
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "not globally routable"),  # shared address space (carrier NAT)
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("::ffff:127.0.0.1", "loopback"),  # an IPv4-mapped IPv6 address is its IPv4 address
        ("::ffff:10.0.0.1", "private"),
    ],
)
def test_addresses_that_are_not_public_are_refused(address, reason):
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        # 6to4 (2002::/16) and Teredo (2001::/32) tunnel to the IPv4 address they carry: refused whatever it is
        ("2002:c0a8:101::1", "6to4"),  # 192.168.1.1
        ("2002:7f00:1::1", "6to4"),  # 127.0.0.1
        ("2002:808:808::1", "6to4"),  # 8.8.8.8
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo"),  # client 10.0.0.1
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),  # client 192.0.2.45
        # the others are refused for the IPv4 address they embed
        ("::10.0.0.1", "private"),  # IPv4-compatible
        ("::127.0.0.1", "loopback"),
        ("64:ff9b::10.0.0.1", "private"),  # NAT64, well-known prefix
        ("64:ff9b::169.254.169.254", "link-local"),
        ("64:ff9b::127.0.0.1", "loopback"),
        ("2606:4700::5efe:a00:1", "private"),  # ISATAP interface id, 10.0.0.1
        ("2606:4700::200:5efe:a9fe:a9fe", "link-local"),  # ISATAP, 169.254.169.254
        ("::ffff:169.254.169.254", "link-local"),  # IPv4-mapped
    ],
)
def test_ipv6_addresses_that_carry_an_ipv4_address_are_refused_for_it(address, reason):
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["64:ff9b:1::a00:1", "64:ff9b:1:ffff::808:808"])
def test_the_local_use_nat64_prefix_is_refused(address):
    assert refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_not(address):
    assert refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("address", ["64:ff9b::8.8.8.8", "64:ff9b::5db8:d70e", "2606:4700::5efe:808:808"])
def test_nat64_and_isatap_addresses_that_carry_a_public_ipv4_address_are_not_refused(address):
    """An IPv6-only network's DNS64 answers an IPv4-only receiver's name with a NAT64 address: it is reached."""
    assert refusal(ipaddress.ip_address(address)) is None


def test_a_submitted_nat64_literal_of_a_public_ipv4_address_is_taken():
    url = "https://[64:ff9b::808:808]/hook"
    assert check_submitted(url, allow_private=False) == url


@pytest.mark.parametrize("address", ["::8.8.8.8", "::93.184.215.14"])
def test_ipv4_compatible_addresses_are_refused_even_when_their_ipv4_address_is_public(address):
    """Deprecated (RFC 4291) and routed nowhere: refused as reserved, whatever they carry."""
    assert refusal(ipaddress.ip_address(address)) == "reserved"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://[::1]/hook",
        "http://10.0.0.5/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00::1]/hook",
        "http://0.0.0.0/",
        "http://localhost:8000/hook",
        "http://LOCALHOST/hook",
        "http://api.localhost/hook",
        # IPv4 in the spellings inet_aton (and so many HTTP clients) takes
        "http://2130706433/hook",
        "http://0x7f.1/hook",
        "http://0177.0.0.1/hook",
        "http://127.1/hook",
    ],
)
def test_a_submitted_url_naming_a_loopback_or_private_address_is_refused(url):
    with pytest.raises(InvalidCallbackUrl, match="address"):
        check_submitted(url, allow_private=False)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.0.0.5/h"])
def test_allowing_private_addresses_lets_them_through(url):
    assert check_submitted(url, allow_private=True) == url


def test_allowing_private_addresses_still_refuses_what_is_not_an_http_url():
    with pytest.raises(InvalidCallbackUrl):
        check_submitted("gopher://127.0.0.1/", allow_private=True)


@pytest.mark.parametrize("url", ["https://example.com/hook", "http://93.184.215.14:8080/h", "https://hooks.internal/x"])
def test_a_public_address_or_a_host_name_is_taken_as_submitted(url):
    # Names are resolved at delivery, where each address they resolve to is checked.
    assert check_submitted(url, allow_private=False) == url

"""A name server that never answers, and a process whose system resolver asks it.

``SilentResolver`` is a UDP socket on port 53 of a loopback address of its
own (127.53.x.y, so that several can run at once on one machine): it
records the name of every query it gets and answers none.  ``resolving_with``
wraps a command so that it runs in a mount namespace of its own, where
``/etc/resolv.conf`` is the resolver's file (bind-mounted over it for that
process alone; the machine's file is untouched): the command's
``getaddrinfo`` is then glibc's own, reading that file, sending its
queries to the silent server and waiting for the resolver's timeouts,
which the file sets long (``options timeout:30 attempts:2``), so that only
a deadline of the caller's own ends a lookup sooner.

It needs ``unshare`` (util-linux) and the rights to make a mount namespace
and bind port 53: root, as the test machines run.
"""

from __future__ import annotations

import random
import shlex
import socket
import threading
from pathlib import Path

DNS_PORT = 53
# glibc's own wait: two tries of 30 s each, far past any webhook deadline a test sets.
RESOLVER_OPTIONS = "options timeout:30 attempts:2"


class SilentResolver:
    """Takes DNS queries on ``address``:53, records their names, and never answers."""

    def __init__(self, work_dir: Path):
        self.sock, self.address = _bound_on_a_loopback_address()
        self.resolv_conf = Path(work_dir) / "resolv.conf"
        self.resolv_conf.write_text(f"nameserver {self.address}\n{RESOLVER_OPTIONS}\n")
        self._asked: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._listen, name="silent-resolver", daemon=True)

    def __enter__(self) -> SilentResolver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    @property
    def asked(self) -> list[str]:
        """The names queried so far, in order (a name asked for A and AAAA comes twice)."""
        with self._lock:
            return list(self._asked)

    def _listen(self) -> None:
        while True:
            try:
                packet, _ = self.sock.recvfrom(4096)
            except OSError:  # closed
                return
            with self._lock:
                self._asked.append(query_name(packet))


def query_name(packet: bytes) -> str:
    """The QNAME of a DNS query (its labels after the 12-byte header), dotted."""
    labels, at = [], 12
    while at < len(packet) and packet[at]:
        length = packet[at]
        labels.append(packet[at + 1 : at + 1 + length].decode("ascii", "replace"))
        at += 1 + length
    return ".".join(labels)


def resolving_with(resolver: SilentResolver, argv: list[str]) -> list[str]:
    """``argv`` run in a mount namespace of its own whose /etc/resolv.conf asks ``resolver``."""
    mount = f"mount --bind {shlex.quote(str(resolver.resolv_conf))} /etc/resolv.conf"
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mount} && exec "$@"', "sh", *argv]


def _bound_on_a_loopback_address() -> tuple[socket.socket, str]:
    last: OSError | None = None
    for _ in range(50):
        address = f"127.53.{random.randrange(1, 255)}.{random.randrange(1, 255)}"
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((address, DNS_PORT))
        except OSError as error:  # taken by another test's resolver
            sock.close()
            last = error
            continue
        return sock, address
    raise AssertionError(f"no loopback address with port {DNS_PORT} free: {last}")

"""An https:// attempt's deadline: a receiver dribbling its TLS handshake or its answer is cut off.

Each read of the socket has its own timeout, so only the deadline ends a
receiver that sends a byte at a time.  The receivers here keep sending far
longer than the attempt's deadline; the attempt must end as a timeout while
they are still at it.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from coordinator import delivery
from coordinator.delivery import AttemptError, post

BODY = b'{"id":"abc","status":"completed"}'
DEADLINE = 1.0
# Far past the deadline: a receiver still sending when the attempt ended was cut off by the deadline.
DRIBBLE_FOR = 20.0
DRIBBLE_EVERY = 0.05  # well inside each read's own timeout (the whole deadline)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (PEM files)."""
    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@pytest.fixture
def trusted(monkeypatch, certificate):
    """The deliverer's TLS context trusts the test certificate (and still verifies it, and the name)."""
    real = ssl.create_default_context
    cert_file, _ = certificate
    monkeypatch.setattr(delivery.ssl, "create_default_context", lambda *a, **k: real(cafile=str(cert_file)))


class Dribbler:
    """A receiver on 127.0.0.1 that takes one connection and hands it to ``serve`` on its own thread."""

    def __init__(self, serve):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.serve = serve
        self.stop = threading.Event()
        self.ran_out = False  # it sent for all of DRIBBLE_FOR: nothing cut it off
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Dribbler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(timeout=5)

    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/hook"

    def _run(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        with conn, contextlib.suppress(OSError):  # OSError: the client went away, what the deadline does
            self.serve(self, conn)

    def dribble(self, send, data: bytes) -> None:
        """Sends ``data`` a byte at a time, then one more byte each DRIBBLE_EVERY, until DRIBBLE_FOR is over."""
        ends = time.monotonic() + DRIBBLE_FOR
        pending = iter(data)
        while not self.stop.is_set():
            if time.monotonic() > ends:
                self.ran_out = True
                return
            send(bytes([next(pending, ord("a"))]))
            self.stop.wait(DRIBBLE_EVERY)


def silent(dribbler: Dribbler, conn: socket.socket) -> None:
    dribbler.stop.wait(DRIBBLE_FOR)
    dribbler.ran_out = not dribbler.stop.is_set()


def dribbled_handshake(dribbler: Dribbler, conn: socket.socket) -> None:
    """Reads the ClientHello, then starts a handshake record 16 KiB long and sends it a byte at a time."""
    conn.recv(65536)
    conn.sendall(b"\x16\x03\x03\x40\x00")
    dribbler.dribble(conn.sendall, b"")


def dribbled_answer(certificate: tuple[Path, Path]):
    """Completes TLS, then sends the status line and a header that never ends, a byte at a time."""

    def serve(dribbler: Dribbler, conn: socket.socket) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*map(str, certificate))
        with context.wrap_socket(conn, server_side=True) as tls:
            tls.recv(65536)
            dribbler.dribble(tls.sendall, b"HTTP/1.1 200 OK\r\nX-Padding: ")

    return serve


def send(url: str):
    headers = delivery.headers(BODY, 1, "", 1700000000, "msg_job_0")
    return post(url, BODY, headers, timeout=DEADLINE, allow_private=True)


@pytest.mark.usefixtures("trusted")
def test_a_receiver_that_accepts_and_never_starts_tls_times_out():
    with Dribbler(silent) as receiver:
        answer = send(receiver.url())
        cut_off = not receiver.ran_out

    assert (answer.status, answer.error_code) == (None, AttemptError.TIMEOUT)
    assert cut_off


@pytest.mark.usefixtures("trusted")
def test_a_tls_handshake_sent_a_byte_at_a_time_ends_at_the_deadline():
    with Dribbler(dribbled_handshake) as receiver:
        answer = send(receiver.url())
        cut_off = not receiver.ran_out

    assert (answer.status, answer.error_code) == (None, AttemptError.TIMEOUT)
    assert cut_off, "the attempt lasted as long as the receiver kept sending"


def test_an_answer_sent_a_byte_at_a_time_over_tls_ends_at_the_deadline(trusted, certificate):
    with Dribbler(dribbled_answer(certificate)) as receiver:
        answer = send(receiver.url())
        cut_off = not receiver.ran_out

    assert (answer.status, answer.error_code) == (None, AttemptError.TIMEOUT)
    assert not answer.delivered
    assert cut_off, "the attempt lasted as long as the receiver kept sending"


def test_the_certificate_is_still_verified(certificate):
    """Without the test's trust in it, the self-signed certificate fails the attempt."""

    def complete_tls(dribbler: Dribbler, conn: socket.socket) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*map(str, certificate))
        with context.wrap_socket(conn, server_side=True) as tls:
            tls.recv(65536)

    with Dribbler(complete_tls) as receiver:
        answer = send(receiver.url())

    assert (answer.status, answer.error_code) == (None, AttemptError.CONNECTION_FAILED)
    assert "certificate" in answer.error

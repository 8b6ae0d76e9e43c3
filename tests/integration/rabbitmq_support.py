"""A private rabbitmq-server for the tests that run ocrgw with RabbitMQ as its broker.

``RabbitMQServer`` runs Debian's rabbitmq-server in the foreground, as the
user running the tests, with everything of its own under one directory: its
node name, data (``RABBITMQ_MNESIA_BASE``), logs, config, and an epmd of its
own on a free port (``ERL_EPMD_PORT``), so that it neither meets a system
RabbitMQ nor leaves a daemon behind.  Every port listens on 127.0.0.1 only.

It is ready once an AMQP connection succeeds; ``stop()`` is a SIGTERM, which
RabbitMQ answers with its orderly shutdown; ``restart()`` starts it again on
the same node name, ports and data directory, so durable queues and the
messages in them come back.

Each Redis database of the tests has a virtual host of its own
(``url_for(db)``), loaded at boot from a definitions file, so that processes
on two databases never take each other's messages, as they could not with a
Redis broker either.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from tests.harness import REDIS_DATABASES, Proc, ProcGroup, free_port, uniq

USER, PASSWORD = "ocrgw", "ocrgw-test-password"
# The server itself, not Debian's /usr/sbin wrapper (which switches to the rabbitmq user).
SERVER_PATHS = ("/usr/lib/rabbitmq/bin/rabbitmq-server",)
START_TIMEOUT = 120.0


def find_rabbitmq_server() -> str | None:
    for path in SERVER_PATHS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("rabbitmq-server")


def vhost(db: int) -> str:
    return f"ocrgw-{db}"


def _password_hash(password: str) -> str:
    """RabbitMQ's rabbit_password_hashing_sha256: base64(salt + sha256(salt + password))."""
    salt = os.urandom(4)
    return base64.b64encode(salt + hashlib.sha256(salt + password.encode()).digest()).decode()


def _definitions() -> dict:
    hosts = [vhost(db) for db in range(REDIS_DATABASES)]
    return {
        "users": [
            {
                "name": USER,
                "password_hash": _password_hash(PASSWORD),
                "hashing_algorithm": "rabbit_password_hashing_sha256",
                "tags": ["administrator"],
            }
        ],
        "vhosts": [{"name": name} for name in hosts],
        "permissions": [
            {"user": USER, "vhost": name, "configure": ".*", "write": ".*", "read": ".*"} for name in hosts
        ],
    }


class RabbitMQServer:
    """A rabbitmq-server node on 127.0.0.1, restartable on the same node, ports and data."""

    host = "127.0.0.1"

    def __init__(self, group: ProcGroup, base_dir: Path, binary: str | None = None) -> None:
        self.group = group
        self.dir = Path(base_dir)
        self.binary = binary or find_rabbitmq_server() or "rabbitmq-server"
        self.node = f"ocrgw-{uniq()}@localhost"
        self.port: int | None = None
        self.dist_port: int | None = None
        self.epmd_port: int | None = None
        self.proc: Proc | None = None
        self.epmd: Proc | None = None

    def url_for(self, db: int) -> str:
        assert self.port is not None, "rabbitmq-server was never started"
        return f"amqp://{USER}:{PASSWORD}@{self.host}:{self.port}/{vhost(db)}"

    def _write_config(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        definitions = self.dir / "definitions.json"
        definitions.write_text(json.dumps(_definitions()))
        (self.dir / "rabbitmq.conf").write_text(
            f"load_definitions = {definitions}\nlog.console = true\nlog.console.level = info\n"
        )
        (self.dir / "enabled_plugins").write_text("[].\n")
        (self.dir / "rabbitmq-env.conf").write_text("")  # instead of the system's /etc/rabbitmq one

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.dir),  # the Erlang cookie
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": self.host,
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_EPMD_ADDRESS": self.host,
            "RABBITMQ_MNESIA_BASE": str(self.dir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "log"),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "enabled_plugins"),
            "RABBITMQ_CONF_ENV_FILE": str(self.dir / "rabbitmq-env.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(self.dir / "advanced.config"),  # not written: none
            "RABBITMQ_LOGS": "-",
        }

    def start(self, timeout: float = START_TIMEOUT) -> RabbitMQServer:
        """Start on the current ports, or on free ones (and a private epmd) the first time."""
        if self.port is None:
            self._write_config()
            self.port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
            self.epmd = self.group.start(
                "epmd", ["epmd", "-port", str(self.epmd_port), "-address", self.host], wait=False
            )
        self.proc = self.group.start("rabbitmq", [self.binary], env=self.env(), wait=False, cwd=self.dir)
        self.proc.wait_ready(self.accepts_amqp, timeout=timeout)
        return self

    def accepts_amqp(self) -> bool:
        import kombu

        connection = kombu.Connection(self.url_for(0), connect_timeout=2)
        try:
            connection.connect()
            return True
        except Exception:
            return False
        finally:
            connection.release()

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM: RabbitMQ closes its connections and writes its queues out before exiting."""
        if self.proc is None or not self.proc.alive:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.close()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill(signal.SIGKILL)
            self.proc.close()

    def restart(self, timeout: float = START_TIMEOUT) -> RabbitMQServer:
        self.stop()
        return self.start(timeout)

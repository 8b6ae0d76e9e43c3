"""Real processes for integration tests: redis-server, Celery, gunicorn.

The integration and chaos tests exercise ocrgw the way it runs in production:
separate OS processes talking through a real Redis. This module owns their
lifecycle so each test only says *what* it wants running:

* ``Proc`` wraps one command started in its own process group, with its
  output in a log file, so a test can wait for it to be ready, kill it (the
  whole group, Celery's pool children included) or stop it gracefully, and
  read what it printed.
* ``ProcGroup`` starts ``Proc``\\ s for one scope (a test, the session) and
  kills whatever is still alive when that scope ends. Its factories build the
  exact commands the Procfile runs (``worker``, ``coordinator``, ``beat``,
  ``webhooks``, ``web``) with ``sys.executable`` so the project's venv is used.
* ``RedisServer`` runs a private redis-server on a free loopback port, if
  asked with a password (``requirepass``) and TLS only (``TlsFiles``, a CA and
  a server certificate made with openssl); its URLs then carry both.
* A ``ProcGroup`` made with ``broker=`` runs Celery against another broker
  than Redis (``tests/integration/rabbitmq_support.py`` runs a RabbitMQ).

The pytest fixtures that hand these out live in ``tests/conftest.py``.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import itertools
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

if TYPE_CHECKING:  # tests.redis_cluster builds on this module
    from redis.cluster import RedisCluster

    from tests.redis_cluster import LocalCluster

ROOT = Path(__file__).resolve().parent.parent

#: How long a process may take to become ready. Generous on purpose: on a
#: loaded two-core CI machine a Celery worker importing its OCR engines can
#: take many seconds, and these timeouts only bound a hang, they assert nothing.
# The gateway's gunicorn worker (gateway.gunicorn_worker), as observability.gunicorn_config names it.
GATEWAY_WORKER_CLASS = "gateway.gunicorn_worker.ProblemWorker"
START_TIMEOUT = float(os.environ.get("OCRGW_TEST_START_TIMEOUT", "90"))

LOG_TAIL_LINES = 60
REDIS_DATABASES = 16

#: Keys in which kombu's Redis transport records which queues are bound to a
#: named exchange. A producer declares a queue once per connection and caches
#: that, so a long-running process never writes them again: were they deleted
#: (as FLUSHALL does), every later message it sends through a named exchange
#: would be routed nowhere. Celery's default routing (the anonymous exchange)
#: does not read them, but a route with an explicit exchange does.
KOMBU_BINDING_PATTERN = "_kombu.binding*"  # both _kombu.binding.<q> and _kombu.binding_permanent.<q>

CELERY_READY = re.compile(r"@\S+ ready\.")
BEAT_READY = re.compile(r"beat: Starting")

_unique = itertools.count(1)


#: ``OCRGW_TEST_STORE``: where the stacks the tests start keep their store.
TEST_STORE_VARIABLE = "OCRGW_TEST_STORE"
TEST_STORES = ("standalone", "cluster")


def test_store() -> str:
    """``standalone`` (the default: a database of the session's redis-server) or ``cluster``.

    With ``cluster`` every stack the fixtures start keeps its store on the
    session's local Redis Cluster (``OCRGW_REDIS_CLUSTER``), its broker still
    a database of the session's redis-server (see ``ClusterTenancy``).
    """
    value = os.environ.get(TEST_STORE_VARIABLE, "").strip().lower() or "standalone"
    if value not in TEST_STORES:
        raise ValueError(f"{TEST_STORE_VARIABLE}={value!r}: expected one of {', '.join(TEST_STORES)}")
    return value


def on_cluster() -> bool:
    return test_store() == "cluster"


def cluster_of(request: Any) -> ClusterTenancy | None:
    """For a fixture: the session's cluster as the stacks' store (``OCRGW_TEST_STORE=cluster``), else None."""
    return request.getfixturevalue("cluster_tenancy") if on_cluster() else None


def in_ci() -> bool:
    """True when running under CI, where a missing dependency is an error, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def uniq() -> str:
    """A short token that keeps Celery node names and file names apart."""
    return f"{os.getpid()}-{next(_unique)}-{uuid.uuid4().hex[:6]}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    There is a window between closing the probe socket and the server binding
    it; callers that can (``RedisServer``) retry on a bind failure.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(
    predicate: Callable[[], Any],
    timeout: float,
    interval: float = 0.05,
    message: str | Callable[[], str] = "condition was not met",
) -> Any:
    """Poll ``predicate`` until it returns something truthy, and return that.

    Raises AssertionError with ``message`` (a string, or a callable so the text
    can describe the state at the moment of failure) once ``timeout`` seconds
    have passed. Meant for waiting on outcomes such as a job reaching a
    terminal state; the timeout bounds a hang and is not a speed assertion.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"{text} (waited {timeout:g}s)")
        time.sleep(interval)


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(collections.deque(text.splitlines(), maxlen=lines))


class Proc:
    """One command running in its own process group, output in a log file.

    Its own group (``start_new_session``) lets ``kill`` take down the command
    together with everything it forked (Celery's prefork pool), the way a
    machine losing a container would, while ``terminate`` signals only the
    main process so Celery performs its normal warm shutdown.
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path = ROOT,
    ) -> None:
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.cwd = cwd
        self.popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def __repr__(self) -> str:
        state = (
            "not started" if self.popen is None else (f"pid {self.pid}" if self.alive else f"exited {self.returncode}")
        )
        return f"<Proc {self.name} {state}>"

    def start(self) -> Proc:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # The log holds only what the process prints, so a readiness regex
        # can never match the command line itself.
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (open while the process runs; close() closes it)
        self.popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None, f"{self.name} was never started"
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status, or None while the main process runs."""
        return None if self.popen is None else self.popen.poll()

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def wait_ready(
        self,
        ready: str | re.Pattern[str] | Callable[[], Any],
        timeout: float = START_TIMEOUT,
    ) -> Proc:
        """Block until ``ready`` holds: a regex found in the log, or a predicate.

        Fails at once, with the log's tail, if the process exits first, so a
        crash at import time shows its traceback instead of a bare timeout.
        """
        if callable(ready) and not isinstance(ready, re.Pattern):
            check = ready
        else:
            pattern = re.compile(ready) if isinstance(ready, str) else ready
            check = lambda: pattern.search(self.log_text())  # noqa: E731
        deadline = time.monotonic() + timeout
        while True:
            if check():
                return self
            if not self.alive:
                raise AssertionError(
                    f"{self.name} exited with status {self.returncode} before it was ready\n"
                    f"$ {self.command}\nlog {self.log_path}:\n{self.log_tail()}"
                )
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{self.name} was not ready after {timeout:g}s\n"
                    f"$ {self.command}\nlog {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the whole process group (default: SIGKILL, a crash).

        After SIGKILL the main process is reaped before returning, so the
        caller can rely on it being gone. Other signals (SIGSTOP to freeze a
        worker, say) are only sent.
        """
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the whole group is already gone
            os.killpg(self.popen.pid, sig)
        if sig == signal.SIGKILL:
            self.popen.wait(timeout=30)

    def terminate(self) -> None:
        """SIGTERM to the main process only: Celery's warm shutdown, gunicorn's graceful stop."""
        if self.alive:
            assert self.popen is not None, f"{self.name} is alive, so it was started"
            self.popen.send_signal(signal.SIGTERM)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the main process to exit and return its status.

        Raises subprocess.TimeoutExpired if it is still running after ``timeout``.
        """
        assert self.popen is not None, f"{self.name} was never started"
        return self.popen.wait(timeout=timeout)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return tail(self.log_text(), lines)

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def close(self) -> None:
        """Kill whatever of the group is left and release the log file.

        Also run after a graceful exit, since children can outlive their parent.
        """
        if self.popen is not None:
            if self.popen.poll() is None:
                self.kill(signal.SIGKILL)
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None


P = TypeVar("P", bound=Proc)


class WebProc(Proc):
    """A gunicorn running the gateway; ``base_url`` is where it answers."""

    def __init__(self, *args: Any, port: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"

    def healthy(self) -> bool:
        return http_status(f"{self.base_url}/healthz") == 200


# Loopback only, so any proxy settings in the environment must not apply.
_no_proxy_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_status(url: str, timeout: float = 2.0) -> int | None:
    """The HTTP status of a GET, or None if nothing answered."""
    try:
        with _no_proxy_opener.open(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code
    except (urllib.error.URLError, OSError):
        return None


def find_redis_server() -> str | None:
    return shutil.which("redis-server")


@dataclass(frozen=True)
class TlsFiles:
    """A private CA and a server certificate it signed, for 127.0.0.1 and localhost."""

    ca_cert: Path
    server_cert: Path
    server_key: Path

    @classmethod
    def make(cls, directory: Path, ca_name: str = "ocrgw test CA") -> TlsFiles:
        """Generates them with openssl in ``directory`` (valid one day)."""
        directory.mkdir(parents=True, exist_ok=True)
        files = cls(directory / "ca.crt", directory / "server.crt", directory / "server.key")
        ca_key, request, extensions = directory / "ca.key", directory / "server.csr", directory / "server.ext"
        extensions.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")

        def openssl(*args: str | Path) -> None:
            subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)

        openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            f"/CN={ca_name}",
            "-keyout",
            ca_key,
            "-out",
            files.ca_cert,
        )
        openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            files.server_key,
            "-out",
            request,
        )
        openssl(
            "x509",
            "-req",
            "-in",
            request,
            "-CA",
            files.ca_cert,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            extensions,
            "-out",
            files.server_cert,
        )
        return files


class RedisServer:
    """A private redis-server on 127.0.0.1, restartable on the same port and dir.

    ``appendonly=False`` (the default) keeps nothing on disk, the fastest for
    ordinary tests; ``appendonly=True`` lets a test check that state survives a
    restart, through ``restart()`` (graceful) or ``restart(hard=True)``
    (SIGKILL first, a crash).
    """

    host = "127.0.0.1"

    def __init__(
        self,
        group: ProcGroup,
        data_dir: Path,
        *,
        appendonly: bool = False,
        extra_args: Iterable[str] = (),
        binary: str | None = None,
        name: str = "redis",
        password: str | None = None,
        tls: TlsFiles | None = None,
    ) -> None:
        self.group = group
        self.password = password  # requirepass: every client must AUTH
        self.tls = tls  # TLS only: the port takes no plain connection
        self.dir = Path(data_dir)
        self.appendonly = appendonly
        self.extra_args = list(extra_args)
        self.binary = binary or find_redis_server() or "redis-server"
        self.name = name
        self.port: int | None = None
        self.proc: Proc | None = None

    @property
    def url(self) -> str:
        """URL of database 0."""
        return self.url_for(0)

    def url_for(self, db: int) -> str:
        assert self.port is not None, "redis server was never started"
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        if self.tls is None:
            return f"redis://{auth}{self.host}:{self.port}/{db}"
        return (
            f"rediss://{auth}{self.host}:{self.port}/{db}"
            f"?ssl_cert_reqs=required&ssl_ca_certs={quote(str(self.tls.ca_cert))}"
        )

    def connection_kwargs(self) -> dict[str, Any]:
        """What a redis-py client needs besides host and port: the password, the TLS settings."""
        kwargs: dict[str, Any] = {"password": self.password} if self.password else {}
        if self.tls is not None:
            kwargs.update(ssl=True, ssl_cert_reqs="required", ssl_ca_certs=str(self.tls.ca_cert))
        return kwargs

    def _security_args(self) -> list[str]:
        args = ["--requirepass", self.password] if self.password else []
        if self.tls is not None:
            args += [
                "--port",
                "0",
                "--tls-port",
                str(self.port),
                "--tls-cert-file",
                str(self.tls.server_cert),
                "--tls-key-file",
                str(self.tls.server_key),
                "--tls-ca-cert-file",
                str(self.tls.ca_cert),
                "--tls-auth-clients",
                "no",
            ]
        return args

    def _argv(self) -> list[str]:
        return [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--dir",
            str(self.dir),
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--databases",
            str(REDIS_DATABASES),
            "--daemonize",
            "no",
            *self._security_args(),
            *self.extra_args,
        ]

    def start(self, timeout: float = 30) -> RedisServer:
        """Start on the current port, or on a free one the first time.

        A first start retries on a new port if another process grabbed the
        probed one in the meantime; a restart must keep its port.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        pick_port = self.port is None
        for attempt in range(5):
            if pick_port:
                self.port = free_port()
            self.proc = self.group.start(self.name, self._argv(), wait=False)
            try:
                self.proc.wait_ready(self.ping, timeout=timeout)
                return self
            except AssertionError:
                log = self.proc.log_text()
                self.proc.close()
                if pick_port and "Address already in use" in log and attempt < 4:
                    continue
                raise
        raise AssertionError("unreachable")

    def ping(self) -> bool:
        import redis

        assert self.port is not None, "redis server was never started"
        try:
            with redis.Redis(
                host=self.host, port=self.port, socket_timeout=2, socket_connect_timeout=1, **self.connection_kwargs()
            ) as client:
                return bool(client.ping())
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            # ResponseError covers "LOADING": up, but still reading its AOF.
            return False

    def client(self, db: int = 0, **kwargs: Any):
        """A redis-py client for ``db``. Use it as a context manager so it closes."""
        import redis

        assert self.port is not None, "redis server was never started"
        return redis.Redis(host=self.host, port=self.port, db=db, **{**self.connection_kwargs(), **kwargs})

    def stop(self, timeout: float = 30) -> None:
        """Graceful shutdown (SIGTERM): Redis fsyncs its AOF before exiting."""
        if self.proc is None or not self.proc.alive:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.close()

    def kill(self) -> None:
        """SIGKILL: what Redis keeps afterwards is only what its fsync policy wrote."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.close()

    def restart(self, hard: bool = False, timeout: float = 30) -> RedisServer:
        """Stop (or kill, if ``hard``) and start again on the same port and dir."""
        if hard:
            self.kill()
        else:
            self.stop(timeout)
        return self.start(timeout)

    def flushall(self) -> None:
        with self.client() as client:
            client.flushall()

    def flushdb(self, db: int) -> None:
        with self.client(db) as client:
            client.flushdb()

    def clean(self) -> None:
        """Empty every database except kombu's exchange bindings.

        FLUSHALL as far as the tests' own data goes, while the long-lived
        session stack keeps routing messages (see KOMBU_BINDING_PATTERN).
        """
        with self.client() as client:
            keyspace = client.info("keyspace")
        for name in keyspace:
            db = int(name.removeprefix("db"))
            with self.client(db) as client:
                keep = set(client.scan_iter(match=KOMBU_BINDING_PATTERN, count=1000))
                doomed = [k for k in client.scan_iter(count=1000) if k not in keep]
                for i in range(0, len(doomed), 1000):
                    client.delete(*doomed[i : i + 1000])


@dataclass
class Stack:
    """A worker, a coordinator and a beat against one Redis database.

    ``web()`` starts a gateway on the same database the first time it is
    called and returns the same one afterwards.  ``webhooks`` is the
    webhook deliverer, when the stack was asked for one.  ``shared`` marks
    the session's stack, whose database the tests empty before each of them.
    """

    group: ProcGroup
    db: int
    redis_url: str
    env: dict[str, str]
    worker: Proc
    coordinator: Proc
    beat: Proc
    _web: WebProc | None = field(default=None, repr=False)
    webhooks: Proc | None = None
    shared: bool = False
    concurrency: int = 2

    def web(self) -> WebProc:
        if self._web is None or not self._web.alive:
            self._web = self.group.web(db=self.db, env=self.env)
        return self._web

    @property
    def store_env(self) -> dict[str, str]:
        """What points a process (a command a test runs) at this stack's store: its Redis, or its cluster."""
        return {"REDIS_URL": self.redis_url, **self.group.cluster_env(self.db)}

    @contextlib.contextmanager
    def store_client(self) -> Iterator[Any]:
        """A redis-py client of this stack's store: of its database, or a ``RedisCluster`` of its cluster
        (this process's bucket count set to the stack's meanwhile, so ``jobs.keys`` names its keys)."""
        tenancy = self.group.cluster
        if tenancy is None:
            with self.group.redis.client(self.db) as client:
                yield client
            return
        from jobs.config import CLUSTER_BUCKETS
        from tests.keyspace import keys

        keys.use_bucket_count(int(self.env.get("OCRGW_STORE_BUCKETS", CLUSTER_BUCKETS)))
        try:
            with tenancy.client() as client:
                yield client
        finally:
            keys.use_bucket_count(None)

    def resume(self) -> Stack:
        """On a cluster another stack took over (and stopped this one's processes): start them again.

        A no-op while this stack holds the cluster, and on a standalone Redis.
        """
        tenancy = self.group.cluster
        if tenancy is None or tenancy.owner == self.db:
            return self
        fresh = self.group.stack(
            db=self.db,
            env=self.env,
            concurrency=self.concurrency,
            web=self._web is not None,
            webhooks=self.webhooks is not None,
        )
        self.worker, self.coordinator, self.beat = fresh.worker, fresh.coordinator, fresh.beat
        self._web, self.webhooks = fresh._web, fresh.webhooks
        return self

    @property
    def procs(self) -> list[Proc]:
        return [p for p in (self.worker, self.coordinator, self.beat, self._web, self.webhooks) if p is not None]


_gunicorn_flags: list[str] | None = None


def _gunicorn_isolation_args() -> list[str]:
    """Flags that keep concurrent test gunicorns from sharing machine-wide state.

    gunicorn 27 opens a control socket at one fixed path per user, which
    several gunicorns on one machine would fight over; older releases have
    neither the socket nor the flag.
    """
    global _gunicorn_flags
    if _gunicorn_flags is None:
        help_text = subprocess.run(
            [sys.executable, "-m", "gunicorn", "--help"], capture_output=True, text=True, timeout=60
        ).stdout
        _gunicorn_flags = ["--no-control-socket"] if "--no-control-socket" in help_text else []
    return _gunicorn_flags


class ClusterTenancy:
    """The session's Redis Cluster as the store of the stacks a run starts (``OCRGW_TEST_STORE=cluster``).

    The stacks share one cluster, and their keys carry nothing of the stack's
    own: one stack's coordinator would sweep another's jobs (and re-publish
    them on its own broker, to its own worker).  So one stack runs on the
    cluster at a time, its *owner*, named by its broker's database on the
    session's redis-server.  A process started for another database takes
    the cluster over: the previous owner's processes are killed, the cluster
    made whole again (a node a test killed restarted) and emptied.  A stack
    whose processes were killed so starts them again on ``Stack.resume()``
    (the integration fixtures call it before each test of the stack).  A test
    that needs two stacks at once cannot run so: it is marked
    ``standalone(reason)`` and the cluster run deselects it.
    """

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.owner: int | None = None
        self._procs: list[Proc] = []

    def env(self) -> dict[str, str]:
        return self.cluster.env()

    def claim(self, db: int) -> None:
        """Make the stack of broker database ``db`` the cluster's owner (a no-op if it is)."""
        if self.owner == db:
            return
        for proc in self._procs:
            proc.close()
        self._procs = []
        self.owner = db
        self.empty()

    def add(self, proc: Proc) -> Proc:
        """Count ``proc`` among the owner's processes, killed when another stack takes over."""
        self._procs.append(proc)
        return proc

    def empty(self) -> None:
        """Every node up, every replica synced, no key."""
        self.cluster.restore()
        self.cluster.flushall()

    def client(self, **kwargs: Any) -> RedisCluster:
        return self.cluster.client(**kwargs)


#: Every ProcGroup not yet closed, so a failing test can show their logs.
OPEN_GROUPS: list[ProcGroup] = []

_db_cycle = itertools.cycle(range(1, REDIS_DATABASES))


class ProcGroup:
    """Starts processes for one scope and kills whatever is left on ``close()``.

    ``redis`` may be a RedisServer or a zero-argument callable returning one,
    so a group used only for plain subprocesses never needs Redis.  ``broker``,
    if given, names the Celery broker of a database's processes (a callable
    from the database number to a URL, such as ``RabbitMQServer.url_for``);
    without it, the broker is that database on the same Redis.  ``cluster``
    (a ``ClusterTenancy``, or a zero-argument callable returning one or None)
    puts the store of its ocrgw processes on a Redis Cluster instead, the
    broker staying that database.
    """

    def __init__(
        self,
        work_dir: Path,
        redis: RedisServer | Callable[[], RedisServer] | None = None,
        label: str = "",
        broker: Callable[[int], str] | None = None,
        cluster: ClusterTenancy | Callable[[], ClusterTenancy | None] | None = None,
    ) -> None:
        self.work_dir = Path(work_dir)
        self.broker = broker
        self._cluster = cluster
        self.log_dir = self.work_dir / "logs"
        self.label = label
        self._redis = redis
        self.procs: list[Proc] = []
        self._names: collections.Counter[str] = collections.Counter()
        self._fresh_dbs: list[int] = []
        OPEN_GROUPS.append(self)

    # -- generic -----------------------------------------------------------

    def _unique_name(self, name: str) -> str:
        self._names[name] += 1
        n = self._names[name]
        return name if n == 1 else f"{name}-{n}"

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        ready: str | re.Pattern[str] | Callable[[], Any] | None = None,
        timeout: float = START_TIMEOUT,
        wait: bool = True,
        proc_class: type[Proc] = Proc,
        **kwargs: Any,
    ) -> Proc:
        """Start ``argv`` as a Proc named ``name`` (made unique within the group).

        With ``ready`` and ``wait``, block until it is ready; otherwise return
        at once and let the caller ``wait_ready`` (to start several in parallel).
        """
        name = self._unique_name(name)
        proc = proc_class(name, argv, self.log_dir / f"{name}.log", env=env, **kwargs)
        self.procs.append(proc)
        proc.start()
        if ready is not None and wait:
            proc.wait_ready(ready, timeout)
        return proc

    # -- redis -------------------------------------------------------------

    @property
    def redis(self) -> RedisServer:
        if self._redis is None:
            raise RuntimeError("this ProcGroup has no redis server")
        if callable(self._redis) and not isinstance(self._redis, RedisServer):
            self._redis = self._redis()
        return self._redis

    def url(self, db: int | None = None) -> str:
        return self.redis.url_for(db or 0)

    @property
    def cluster(self) -> ClusterTenancy | None:
        """The Redis Cluster this group's ocrgw processes keep their store on, or None (the database)."""
        if self._cluster is not None and not isinstance(self._cluster, ClusterTenancy):
            self._cluster = self._cluster()
        return self._cluster

    def cluster_env(self, db: int | None) -> dict[str, str]:
        """What puts the store of database ``db``'s processes on the group's cluster, the broker staying
        that database: nothing on a standalone Redis."""
        tenancy = self.cluster
        if tenancy is None:
            return {}
        return {**tenancy.env(), "CELERY_BROKER_URL": self.broker(db or 0) if self.broker else self.url(db)}

    def _on_store(self, db: int | None, proc: P) -> P:
        """``proc`` runs on the store of database ``db``: on a cluster, one of its owner's processes."""
        tenancy = self.cluster
        if tenancy is not None:
            tenancy.add(proc)
        return proc

    def fresh_db(self) -> int:
        """An emptied Redis database 1..15 for this test's own processes.

        Database 0 belongs to the shared session stack; a test that kills or
        restarts processes runs its own set against one of these instead, so
        the session stack never sees its debris. Emptied again at close.
        """
        db = next(_db_cycle)
        self.redis.flushdb(db)
        self._fresh_dbs.append(db)
        return db

    # -- ocrgw processes (the Procfile's commands) --------------------------

    def _env(self, db: int | None, env: Mapping[str, str] | None) -> dict[str, str]:
        broker = {} if self.broker is None else {"CELERY_BROKER_URL": self.broker(db or 0)}
        tenancy = self.cluster
        if tenancy is None:
            return {"REDIS_URL": self.url(db), **broker, **(env or {})}
        tenancy.claim(db or 0)  # the cluster taken over for this database's stack
        return {"REDIS_URL": self.url(db), **self.cluster_env(db), **(env or {})}

    def worker(
        self,
        *,
        concurrency: int = 2,
        queues: str | None = None,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: Iterable[str] = (),
        wait: bool = True,
        timeout: float = START_TIMEOUT,
    ) -> Proc:
        # Without queues, every model's queue (the registry's, remote models included), as the Procfile's worker.
        named = ["--queues", queues] if queues is not None else []
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workers",
            "worker",
            "--loglevel",
            "INFO",
            *named,
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"worker-{uniq()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *extra_args,
        ]
        env = self._env(db, env)
        return self._on_store(db, self.start("worker", argv, env=env, ready=CELERY_READY, wait=wait, timeout=timeout))

    def coordinator(
        self,
        *,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: Iterable[str] = (),
        wait: bool = True,
        timeout: float = START_TIMEOUT,
    ) -> Proc:
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "coordinator",
            "worker",
            "--loglevel",
            "INFO",
            "--queues",
            "coordinator",
            "--pool",
            "solo",
            "--hostname",
            f"coord-{uniq()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *extra_args,
        ]
        env = self._env(db, env)
        proc = self.start("coordinator", argv, env=env, ready=CELERY_READY, wait=wait, timeout=timeout)
        return self._on_store(db, proc)

    def beat(
        self,
        *,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        wait: bool = True,
        timeout: float = START_TIMEOUT,
    ) -> Proc:
        schedule = self.work_dir / f"beat-{uniq()}"
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "coordinator",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(schedule),
        ]
        env = self._env(db, env)
        return self._on_store(db, self.start("beat", argv, env=env, ready=BEAT_READY, wait=wait, timeout=timeout))

    def webhooks(
        self,
        *,
        concurrency: int = 4,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        wait: bool = True,
        timeout: float = START_TIMEOUT,
        wrapped_in: Sequence[str] = (),
    ) -> Proc:
        """The webhook deliverer: a Celery worker of the coordinator on the webhooks queue, with a thread pool.

        ``wrapped_in``: a command that runs it (its arguments last), such as one giving it a resolver of its own.
        """
        argv = [
            *wrapped_in,
            *(sys.executable, "-m", "celery", "-A", "coordinator", "worker", "--loglevel", "INFO"),
            *("--queues", "webhooks", "--pool", "threads", "--concurrency", str(concurrency)),
            *("--hostname", f"webhooks-{uniq()}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"),
        ]
        env = self._env(db, env)
        return self._on_store(db, self.start("webhooks", argv, env=env, ready=CELERY_READY, wait=wait, timeout=timeout))

    def web(
        self,
        *,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        threads: int = 4,
        wait: bool = True,
        timeout: float = START_TIMEOUT,
    ) -> WebProc:
        port = free_port()
        argv = [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--threads",
            str(threads),
            "--access-logfile",
            "-",
            # The Procfile's gunicorn gets it from its config: requests gunicorn refuses are problems too.
            "--worker-class",
            GATEWAY_WORKER_CLASS,
            *_gunicorn_isolation_args(),
            "gateway:create_app()",
        ]
        proc = self.start("web", argv, env=self._env(db, env), proc_class=WebProc, port=port, wait=False)
        assert isinstance(proc, WebProc), "start() builds the proc_class it is given"
        self._on_store(db, proc)
        if wait:
            proc.wait_ready(proc.healthy, timeout)
        return proc

    def stack(
        self,
        *,
        db: int | None = None,
        env: Mapping[str, str] | None = None,
        concurrency: int = 2,
        web: bool = False,
        webhooks: bool = False,
        timeout: float = START_TIMEOUT,
    ) -> Stack:
        """Worker, coordinator and beat (and a web, and a webhook deliverer, if asked), started in parallel."""
        env = dict(env or {})
        worker = self.worker(concurrency=concurrency, db=db, env=env, wait=False)
        coordinator = self.coordinator(db=db, env=env, wait=False)
        beat = self.beat(db=db, env=env, wait=False)
        web_proc = self.web(db=db, env=env, wait=False) if web else None
        deliverer = self.webhooks(db=db, env=env, wait=False) if webhooks else None
        worker.wait_ready(CELERY_READY, timeout)
        coordinator.wait_ready(CELERY_READY, timeout)
        beat.wait_ready(BEAT_READY, timeout)
        if web_proc is not None:
            web_proc.wait_ready(web_proc.healthy, timeout)
        if deliverer is not None:
            deliverer.wait_ready(CELERY_READY, timeout)
        # On a cluster the stack's env names the cluster too, so that whatever a test builds from it
        # (a JobStore, a command's environment) reaches the same store.
        stack_env = {**self.cluster_env(db), **env}
        return Stack(
            self,
            db or 0,
            self.url(db),
            stack_env,
            worker,
            coordinator,
            beat,
            web_proc,
            webhooks=deliverer,
            concurrency=concurrency,
        )

    # -- teardown ------------------------------------------------------------

    def tails(self, lines: int = LOG_TAIL_LINES) -> list[tuple[str, str]]:
        """(title, last lines of log) for every process this group started."""
        where = f" [{self.label}]" if self.label else ""
        return [
            (f"{p.name}{where}: last {lines} log lines ({p.log_path})", f"$ {p.command}\n{p.log_tail(lines)}")
            for p in self.procs
            if p.popen is not None
        ]

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.close()
        if self._fresh_dbs and isinstance(self._redis, RedisServer) and self._redis.ping():
            for db in self._fresh_dbs:
                self._redis.flushdb(db)
        if self in OPEN_GROUPS:
            OPEN_GROUPS.remove(self)


_make_sample_module = None


def make_sample(path: str | Path, *texts: str) -> Path:
    """Write a sample page (PNG, or a PDF with one page per text) via scripts/make_sample.py."""
    global _make_sample_module
    if _make_sample_module is None:
        spec = importlib.util.spec_from_file_location("ocrgw_make_sample", ROOT / "scripts" / "make_sample.py")
        assert spec is not None and spec.loader is not None, "scripts/make_sample.py cannot be loaded"
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _make_sample_module = module
    return _make_sample_module.write_sample(path, list(texts))

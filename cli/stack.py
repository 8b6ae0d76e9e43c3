"""``ocrgw up``: the whole stack on this machine, the Procfile's processes under honcho.

The Procfile is ./Procfile when there is one (a checkout's), else the one inside the package,
run in the working directory: an installed ocrgw needs no checkout.

With ``REDIS_URL`` set, that Redis is used as it is. Without it, a private
redis-server runs for the stack's lifetime, on a free loopback port, with
AOF on (so queued jobs survive a restart of the stack when its data
directory is kept, ``--data-dir``), and is shut down after honcho, so the
processes' last writes (a worker finishing its page in a warm shutdown)
still reach it.

honcho and redis-server each get a session of their own: a Ctrl-C on the
terminal reaches only this process, which passes it on to honcho once;
honcho stops its processes (SIGTERM, SIGKILL after a few seconds), then
this process stops Redis. On Linux both die with this process (SIGTERM
from the kernel), so a ``kill -9`` of it leaves nothing running either.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from types import FrameType

import requests

#: Bounds waiting for redis-server to answer or to stop; it asserts nothing about speed.
REDIS_START_SECONDS = 30.0
REDIS_STOP_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1
#: The process list that ships inside the package (package data), so that an installed ocrgw runs
#: its stack anywhere; the project's top-level Procfile is a symlink to it.
PACKAGED_PROCFILE = "Procfile"


class StackError(Exception):
    """The stack cannot start: what is missing or in the way, in one sentence."""


def default_procfile() -> Path | None:
    """The Procfile in the working directory, else None: the one inside the package."""
    here = Path.cwd() / "Procfile"
    return here if here.is_file() else None


@contextlib.contextmanager
def procfile_and_root(procfile: Path | None) -> Iterator[tuple[Path, Path]]:
    """The Procfile honcho reads and the directory its processes start in.

    A Procfile of one's own runs in its own directory (a checkout's, beside its packages); the
    packaged one runs in the working directory, where relative paths in the environment point.
    A symlink's directory is the link's, not its target's: a checkout's ./Procfile points into cli/.
    """
    if procfile is not None:
        if not procfile.is_file():
            raise StackError(f"no Procfile at {procfile}; name one with --procfile")
        named = Path(os.path.abspath(procfile))  # absolute, symlinks kept
        yield named, named.parent
        return
    with resources.as_file(resources.files("cli").joinpath(PACKAGED_PROCFILE)) as packaged:
        if not packaged.is_file():
            raise StackError(f"this ocrgw was installed without its {PACKAGED_PROCFILE}; name one with --procfile")
        yield packaged, Path.cwd()


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec hook that makes the kernel send SIGTERM to the child when this process dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return lambda: libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _say(text: str) -> None:
    print(f"[ocrgw up] {text}", file=sys.stderr, flush=True)


class PrivateRedis:
    """A redis-server of the stack's own, in ``data_dir`` (AOF on, no RDB snapshots)."""

    def __init__(self, data_dir: Path, port: int | None = None):
        self.dir = data_dir
        self.port = port
        self.pidfile = data_dir / "redis.pid"
        self.log = data_dir / "redis.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise StackError("redis-server is not installed (scripts/setup.sh installs it); or set REDIS_URL")
        self.dir.mkdir(parents=True, exist_ok=True)
        self._refuse_if_in_use()
        chosen = self.port is not None
        for _ in range(5):
            port = self.port if chosen else free_port()
            assert port is not None
            self.port = port
            self.proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    str(self.dir),
                    "--appendonly",
                    "yes",
                    "--save",
                    "",
                    "--daemonize",
                    "no",
                    "--pidfile",
                    str(self.pidfile),
                    "--logfile",
                    str(self.log),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
            if self._wait_ready():
                return self
            log = self._log_tail()
            if not chosen and "Address already in use" in log:
                continue  # another program took the probed port meanwhile
            self.stop()
            raise StackError(f"redis-server did not start on port {port}; its log ({self.log}):\n{log}")
        raise StackError("redis-server found no free port")

    def _refuse_if_in_use(self) -> None:
        """Two servers on one AOF would corrupt it: a redis-server alive in our pidfile stops us."""
        try:
            pid = int(self.pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return
        if b"redis-server" in cmdline:
            raise StackError(
                f"a redis-server (pid {pid}) already uses {self.dir}: another `ocrgw up` runs with this "
                f"data directory; stop it first, or use another --data-dir"
            )

    def _wait_ready(self) -> bool:
        # Imported here: the command line's own install (no server extra) imports this module too.
        from redis import Redis
        from redis.exceptions import RedisError

        assert self.port is not None
        deadline = time.monotonic() + REDIS_START_SECONDS
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            try:
                with Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1, socket_timeout=2) as client:
                    if client.ping():
                        return True
            except RedisError:  # not listening yet, or still loading its AOF
                pass
            time.sleep(0.1)
        return False

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """SIGTERM: Redis writes and fsyncs its AOF, then exits; SIGKILL if it does not in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(REDIS_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextlib.contextmanager
def _run_dir() -> Iterator[Path]:
    """Where this run keeps beat's schedule (and Redis's data without ``--data-dir``); removed at the end."""
    path = Path(tempfile.mkdtemp(prefix="ocrgw-up-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def up(port: int, procfile: Path | None, data_dir: Path | None, redis_port: int | None) -> int:
    """Runs the stack until Ctrl-C (or SIGTERM, or one of its processes exits); returns honcho's status.

    ``procfile`` None: ./Procfile if there is one, else the packaged one.
    """
    with procfile_and_root(procfile if procfile is not None else default_procfile()) as (chosen, root):
        return _run_stack(port, chosen, root, data_dir, redis_port)


def _run_stack(port: int, procfile: Path, root: Path, data_dir: Path | None, redis_port: int | None) -> int:
    honcho: subprocess.Popen[bytes] | None = None
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stopping.is_set():
            _say("already stopping; honcho kills what is left after a few seconds")
            return
        stopping.set()
        if honcho is None:
            raise KeyboardInterrupt  # nothing runs under honcho yet: unwind, stopping Redis
        _say(f"{signal.Signals(signum).name}: stopping the stack")
        with contextlib.suppress(ProcessLookupError):
            honcho.send_signal(signal.SIGINT)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    redis: PrivateRedis | None = None
    try:
        with _run_dir() as run_dir:
            env = _environment(port, run_dir)
            # REDIS_URL_FILE gives REDIS_URL too; a process refuses both at once.
            named_by = next((name for name in ("REDIS_URL", "REDIS_URL_FILE") if env.get(name, "").strip()), "")
            if named_by:
                _say(f"using the Redis that {named_by} names")
            else:
                redis = PrivateRedis((data_dir or run_dir / "redis").resolve(), redis_port)
                _say(f"starting redis-server (data in {redis.dir})")
                redis.start()
                env["REDIS_URL"] = redis.url
            honcho = subprocess.Popen(
                [sys.executable, "-m", "honcho", "start", "-d", str(root), "-f", str(procfile)],
                env=env,
                cwd=root,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
            redis_note = redis.url if redis is not None else named_by
            threading.Thread(target=_announce, args=(port, redis_note, stopping), daemon=True).start()
            return honcho.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        stopping.set()
        if honcho is not None and honcho.poll() is None:  # an error of ours while it ran
            honcho.send_signal(signal.SIGINT)
            honcho.wait()
        if redis is not None:
            _say(f"stopping redis-server (port {redis.port})")
            redis.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _environment(port: int, run_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PORT"] = str(port)
    # The Procfile names gunicorn and celery bare: take them from this Python's environment.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("PYTHONUNBUFFERED", "1")
    if not env.get("OCRGW_BEAT_SCHEDULE"):
        env["OCRGW_BEAT_SCHEDULE"] = str(run_dir / "celerybeat-schedule")
    return env


def _announce(port: int, redis_note: str, stopping: threading.Event) -> None:
    """Once the gateway answers, say where it is and what to try."""
    url = f"http://localhost:{port}"
    with requests.Session() as http:
        http.trust_env = False
        while not stopping.is_set():
            try:
                if http.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            stopping.wait(0.5)
        else:
            return
    hint = "" if port == 8000 else f"    export OCRGW_URL={url}\n"
    _say(
        f"ocrgw is up on {url} (Redis: {redis_note}). Try, in another terminal:\n{hint}"
        f"    ocrgw submit --wait page.png    (a page: python scripts/make_sample.py page.png 'Hello from ocrgw')\n"
        f"    ocrgw ls;  ocrgw status ID;  API docs at {url}/docs\n"
        f"  Ctrl-C stops everything."
    )

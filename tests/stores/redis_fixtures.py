"""A throwaway ``redis-server`` for tests and benchmarks, and the pytest fixtures around it.

:class:`RedisServer` starts Debian's ``redis-server`` on a free loopback port in a temporary
directory with persistence off (``--save '' --appendonly no``), waits until it answers
``PING`` and stops it afterwards; ``benchmarks/bench_stores.py`` imports it too. Where the
binary is missing the fixtures skip with a message saying how to run them, unless
``SLIMTOOLS_REQUIRE_REDIS=1`` (set by ``.ci/run``), in which case they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._ports import free_port, owns_port, port_taken, stop

REQUIRE_ENV = "SLIMTOOLS_REQUIRE_REDIS"
HOW_TO = (
    "redis-server not found; to run the Redis tests install it "
    "(Debian/Ubuntu: apt-get install redis-server) and run make test again"
)


def find_redis_server() -> str | None:
    """Path of the ``redis-server`` binary, or ``None``."""
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None
    )


LIVE_TIMEOUT = 30.0
"""The socket timeout of stores on a live test server: a loaded machine may stall the server
for longer than the stores' own short default (0.5 s), and a test that expects an answer
must not get a timeout by chance. Tests of timeouts use servers that never answer."""

_ATTEMPTS = 5  # fresh ports tried when another process takes the one picked


def live_store(url: str, **options: Any) -> Any:
    """A ``RedisStore`` on a live test server, with :data:`LIVE_TIMEOUT` socket timeouts."""
    from slimtools.stores import RedisStore

    return RedisStore(url, socket_timeout=LIVE_TIMEOUT, **options)


def ping(port: int, timeout: float = 0.2) -> bool:
    """True when a Redis server on ``port`` answers ``PING`` with ``+PONG``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process on a loopback port; :meth:`stop` and :meth:`start` again.

    Args:
        binary: path of ``redis-server``.
        directory: its working directory (logs; nothing is persisted).
        port: the port to use; a free one when omitted.
    """

    def __init__(self, binary: str, directory: Path, port: int | None = None) -> None:
        self.binary = binary
        self.directory = directory
        self.port = port or free_port()
        self._movable = port is None  # may move to another port until it first starts
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until it answers ``PING`` on its own socket.

        A picked port that another process takes first moves the server to a fresh one (on
        the first start only: a restart keeps the port its clients know).
        """
        for _ in range(_ATTEMPTS):
            if self._launch(timeout):
                self._movable = False
                return
            if not (self._movable and port_taken(self.port)):
                break
            self.port = free_port()
        log = self.directory / f"redis-{self.port}.log"
        tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        raise RuntimeError(f"redis-server did not answer PING on port {self.port}:\n{tail}")

    def _launch(self, timeout: float) -> bool:
        """Run the server on :attr:`port`; True once it answers there, from its own socket."""
        command = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--logfile", str(self.directory / f"redis-{self.port}.log"),
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._process = process
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if ping(self.port) and owns_port(process.pid, self.port):
                return True
            time.sleep(0.02)
        self.stop()
        return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and wait for it."""
        process, self._process = self._process, None
        if process is not None:
            stop(process, grace=5)

    def pause(self) -> None:
        """Stop the process with SIGSTOP: connections are accepted, nothing is answered."""
        assert self._process is not None
        os.kill(self._process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Continue a paused process (SIGCONT)."""
        assert self._process is not None
        os.kill(self._process.pid, signal.SIGCONT)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def launch(directory: Path | None = None) -> RedisServer | None:
    """Start a server (for benchmarks); ``None`` when the binary is missing."""
    binary = find_redis_server()
    if binary is None:
        return None
    server = RedisServer(binary, directory or Path(tempfile.mkdtemp(prefix="slimtools-redis-")))
    server.start()
    return server


def redis_binary() -> str:
    """The ``redis-server`` path, or skip the test (fail with ``SLIMTOOLS_REQUIRE_REDIS=1``)."""
    binary = find_redis_server()
    if binary is not None:
        return binary
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{HOW_TO}; {REQUIRE_ENV}=1 requires it")
    pytest.skip(HOW_TO)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server for the whole test session."""
    binary = redis_binary()
    with RedisServer(binary, tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The shared server's URL, with its data flushed before each test."""
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=LIVE_TIMEOUT) as sock:
        sock.sendall(b"FLUSHALL\r\n")
        sock.recv(64)
    return redis_server.url


@pytest.fixture
def own_redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server for one test alone, which it may stop and restart (outage tests)."""
    binary = redis_binary()
    with RedisServer(binary, tmp_path) as server:
        yield server

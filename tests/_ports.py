"""Test servers and commands as real processes: started, waited for, stopped, bounded in time.

A port picked free and bound later by a child process can be taken in between by another
process (other test runs share the machine); a test that then finds the port open would
talk to that stranger. :func:`owns_port` tells, on Linux, whether the listening socket is
the child's own, and :func:`serving` waits for that before it hands the port on (trading a
port a stranger took for a fresh one). :func:`run` runs a command to its end with its output
captured; :func:`stop` ends a process. A process that fails says why with its stderr.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
"""The repository root: where commands run unless told."""
TIMEOUT = 60.0
"""Seconds a command, or a server's start, may take (a loaded machine is slow)."""
ATTEMPTS = 5
"""Fresh ports :func:`serving` tries when other processes take the ones it picked."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now (bind it soon, or re-check)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def refusing_socket() -> socket.socket:
    """A bound socket that never listens: connecting to its port is refused for as long as
    it stays open (a merely free port may be taken by another process meanwhile)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def _listening_inodes(port: int) -> set[str] | None:
    """The inodes of the sockets listening on ``port``; None where ``/proc`` cannot tell."""
    found: set[str] = set()
    readable = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        readable = True
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                found.add(fields[9])
    return found if readable else None


def port_taken(port: int) -> bool:
    """True when some process listens on ``port`` (False where ``/proc`` cannot tell)."""
    return bool(_listening_inodes(port))


def owns_port(pid: int, port: int) -> bool:
    """True when process ``pid`` holds a socket listening on ``port`` (True where ``/proc``
    cannot tell, so that other systems keep the plain wait-until-it-answers check)."""
    inodes = _listening_inodes(port)
    fds = Path(f"/proc/{pid}/fd")
    if inodes is None or not fds.is_dir():
        return True
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[len("socket:[") : -1] in inodes:
            return True
    return False


def slimtools(*args: str) -> list[str]:
    """The command line of ``slimtools ARGS`` with this interpreter."""
    return [sys.executable, "-m", "slimtools.cli", *args]


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | str = ROOT,
    timeout: float = TIMEOUT,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end in ``cwd``, stdout and stderr captured as text; any exit
    status is returned, not raised (``subprocess.TimeoutExpired`` past ``timeout``)."""
    return subprocess.run(
        list(argv),
        env=None if env is None else dict(env),
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def stop(process: subprocess.Popen[Any], grace: float = 10) -> None:
    """End ``process``: SIGTERM, then SIGKILL after ``grace`` seconds; waited for either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serving(
    build: Callable[[int], Sequence[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | str = ROOT,
    timeout: float = TIMEOUT,
) -> Iterator[int]:
    """A server process on a free loopback port (``build`` makes its command from the port),
    waited for until it listens there itself; stopped at the end. Yields the port.

    Raises:
        RuntimeError: the process exited before it listened (its command and stderr said),
            or other processes took :data:`ATTEMPTS` ports in a row.
        TimeoutError: it did not listen within ``timeout`` seconds (its stderr said).
    """
    for _ in range(ATTEMPTS):
        port = free_port()
        command = list(build(port))
        with tempfile.TemporaryFile() as stderr:
            process = subprocess.Popen(
                command, env=None if env is None else dict(env), cwd=cwd, stderr=stderr
            )
            try:
                if not _listens(process, port, command, stderr, timeout):
                    stop(process)
                    continue
            except BaseException:
                stop(process)
                raise
            try:
                yield port
            finally:
                stop(process)
            return
    raise RuntimeError(f"no free port held after {ATTEMPTS} tries")


def _listens(
    process: subprocess.Popen[bytes],
    port: int,
    command: Sequence[str],
    stderr: IO[bytes],
    timeout: float,
) -> bool:
    """True once ``process`` listens on ``port``; False when another process took the port."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            if port_taken(port):
                return False
            raise RuntimeError(
                f"{_shown(command)} exited with status {process.returncode} before it "
                f"listened on port {port}; its stderr:\n{_tail(stderr)}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                if owns_port(process.pid, port):
                    return True
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{_shown(command)} did not listen on port {port} within {timeout:g} s; "
                f"its stderr so far:\n{_tail(stderr)}"
            )
        time.sleep(0.1)


def _shown(command: Sequence[str]) -> str:
    """A command for a message: its first words."""
    words = [Path(w).name if i == 0 else w for i, w in enumerate(command[:6])]
    return repr(" ".join(words) + (" ..." if len(command) > 6 else ""))


def _tail(stream: IO[bytes], limit: int = 4000) -> str:
    """The last ``limit`` characters a process wrote to ``stream`` (a file it shares)."""
    fd = stream.fileno()
    size = os.fstat(fd).st_size
    start = max(0, size - 4 * limit)
    text = os.pread(fd, size - start, start).decode(errors="replace")  # the offset stays put
    return text[-limit:] or "(empty)"

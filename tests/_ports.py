"""Loopback ports for test servers: who listens on one, so a test never talks to a stranger.

A port picked free and bound later by a child process can be taken in between by another
process (other test runs share the machine); a test that then finds the port open would
talk to that stranger. :func:`owns_port` tells, on Linux, whether the listening socket is
the child's own.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


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

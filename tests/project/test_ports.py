"""Test servers' ports: a test talks only to the server it started."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests._ports import owns_port, port_taken, refusing_socket
from tests.stores.redis_fixtures import RedisServer, find_redis_server, ping

LINUX_PROC = Path("/proc/net/tcp").exists()


@pytest.mark.skipif(not LINUX_PROC, reason="who listens is read from /proc (Linux)")
def test_owns_port_tells_our_listener_from_a_strangers():
    """A socket this process listens on is ours; the port is taken; no other pid owns it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert owns_port(os.getpid(), port)
        assert port_taken(port)
        assert not owns_port(os.getppid(), port)


def test_a_refusing_socket_refuses_connections():
    """A bound socket that never listens refuses every connection to its port."""
    with refusing_socket() as held, pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", held.getsockname()[1]), timeout=5).close()


@pytest.mark.skipif(not LINUX_PROC, reason="who listens is read from /proc (Linux)")
def test_a_redis_server_whose_port_was_taken_moves_to_a_fresh_one(tmp_path):
    """Another process on the picked port: the server starts on another port, not the stranger's."""
    binary = find_redis_server()
    if binary is None:
        pytest.skip("redis-server not found")
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        taken = stranger.getsockname()[1]
        server = RedisServer(binary, tmp_path)
        server.port = taken
        with server:
            assert server.port != taken
            assert ping(server.port)

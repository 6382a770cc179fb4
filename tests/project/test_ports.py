"""Test servers' ports: a test talks only to the server it started."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests._ports import owns_port, port_taken, refusing_socket, run, serving, stop
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


LISTENER = """
import socket, sys, time
sock = socket.socket()
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen()
time.sleep(120)
"""


@pytest.mark.subprocess
def test_serving_yields_the_port_once_its_own_process_listens_and_stops_it_after():
    """The port handed on is the child's listener; leaving the block ends the child."""
    with serving(lambda port: [sys.executable, "-c", LISTENER, str(port)]) as port:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert port_taken(port)
    assert not port_taken(port)


@pytest.mark.subprocess
def test_a_server_that_exits_before_listening_is_reported_with_its_stderr():
    """A child that dies on start raises RuntimeError quoting its exit status and stderr."""
    crash = "import sys; sys.stderr.write('the config is bad'); sys.exit(4)"
    said = r"(?s)status 4 before it listened.*the config is bad"
    with pytest.raises(RuntimeError, match=said), serving(lambda p: [sys.executable, "-c", crash]):
        pytest.fail("the block runs only once the server listens")


@pytest.mark.subprocess
def test_a_server_that_never_listens_times_out_with_its_stderr():
    """A child that neither listens nor exits is a TimeoutError quoting its stderr, then stopped."""
    silent = (
        "import sys, time; sys.stderr.write('still loading'); sys.stderr.flush(); time.sleep(60)"
    )
    with (
        pytest.raises(TimeoutError, match=r"(?s)within 1 s.*still loading"),
        serving(lambda port: [sys.executable, "-c", silent], timeout=1),
    ):
        pytest.fail("the block runs only once the server listens")


@pytest.mark.subprocess
def test_run_returns_status_and_both_outputs_as_text():
    """A failing command is returned, not raised: its status, stdout and stderr as text."""
    code = "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"
    done = run([sys.executable, "-c", code])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err")


@pytest.mark.subprocess
def test_stop_ends_a_process_that_ignores_sigterm():
    """A child deaf to SIGTERM is killed after the grace period; stop waits for it."""
    deaf = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print(1, flush=True); time.sleep(60)"
    )
    process = subprocess.Popen([sys.executable, "-c", deaf], stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.readline()  # the handler is in place
    stop(process, grace=0.5)
    assert process.returncode == -9
    process.stdout.close()

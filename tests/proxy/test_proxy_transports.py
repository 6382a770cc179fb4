"""The proxy's served transports: one Protocol, one table, made from their address."""

from __future__ import annotations

import pytest

from slimtools import ConfigurationError
from slimtools.proxy.transports import TRANSPORTS, Stdio, StreamableHTTP, Transport, transport


def test_http_transport_reads_host_and_port() -> None:
    """``http`` at ``HOST:PORT`` serves there."""
    assert transport("http", "0.0.0.0:9000") == StreamableHTTP("0.0.0.0", 9000)


def test_http_transport_defaults_an_empty_host_to_localhost() -> None:
    """``:PORT`` binds 127.0.0.1, never every interface by surprise."""
    assert transport("http", ":9000") == StreamableHTTP("127.0.0.1", 9000)


@pytest.mark.parametrize("address", [None, "", "localhost", "host:port", "host:"])
def test_http_transport_refuses_an_address_without_a_port(address: str | None) -> None:
    """A malformed ``--http`` value is a ``ConfigurationError`` naming the form."""
    with pytest.raises(ConfigurationError, match="HOST:PORT"):
        transport("http", address)


def test_stdio_transport_takes_no_address() -> None:
    """``stdio`` is made without an address and refuses one."""
    assert transport("stdio") == Stdio()
    with pytest.raises(ConfigurationError, match="no address"):
        transport("stdio", "x:1")


def test_an_unknown_transport_is_refused_with_the_known_ones() -> None:
    """An unknown name lists the table's transports."""
    with pytest.raises(ConfigurationError, match="http, stdio"):
        transport("websocket")


def test_every_table_row_makes_a_transport_that_runs_a_server() -> None:
    """Each row's class builds, from a valid address, an object with ``run(server)``."""
    addresses = {"http": "h:1", "stdio": None}
    assert sorted(TRANSPORTS) == sorted(addresses)
    for name, kind in TRANSPORTS.items():
        made: Transport = kind.from_address(addresses[name])
        assert callable(made.run)


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "127.0.0.1:0"])
def test_http_transport_refuses_a_port_out_of_range(address: str) -> None:
    """A port is 1 to 65535: anything else is a usage error naming the address."""
    with pytest.raises(ConfigurationError, match="port"):
        StreamableHTTP.from_address(address)


@pytest.mark.subprocess
def test_a_port_already_taken_is_one_line_and_status_2() -> None:
    """``--http`` on a port in use: no traceback, a line naming the address, exit status 2."""
    import socket
    import sys
    from pathlib import Path

    from tests._ports import run, slimtools

    upstream = str(Path(__file__).with_name("proxy_raw_upstream.py"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        done = run(slimtools("proxy", "--http", address, "--", sys.executable, upstream))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"slimtools proxy: --http {address}: cannot serve there" in done.stderr

"""A gateway you can leave running: upstream faults and odd client input never wedge it."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from slimtools.gateway.app import Limits, create_app
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve


@pytest.fixture
def fake() -> FakeUpstream:
    """A fresh scripted upstream."""
    return FakeUpstream()


@pytest.fixture
def upstream(fake: FakeUpstream) -> Iterator[str]:
    """The scripted upstream's base URL."""
    with serve(create_upstream(fake)) as url:
        yield url


def gateway(upstream: str, **limits: Any) -> AbstractContextManager[str]:
    """A gateway in front of ``upstream`` with the given limits."""
    return serve(create_app(upstream, limits=Limits(**limits)))


def raw_request(url: str, target: str, method: str = "GET", extra: bytes = b"") -> bytes:
    """Send one request line as written (no client normalises it); the raw answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n".encode()
            + extra
            + b"Connection: close\r\n\r\n"
        )
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer."""
    return int(answer.split(b" ", 2)[1])


def free_port() -> int:
    """A port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_upstream_header_outside_latin1_is_relayed(upstream: str) -> None:
    """A header value in UTF-8 (``café ☃``) reaches the client as the bytes that came."""
    with gateway(upstream) as url:
        answer = httpx.get(url + "/fault/odd-header")
    assert answer.status_code == 200
    assert dict(answer.headers.raw)[b"x-note"] == "café ☃".encode()


def test_odd_upstream_headers_never_exhaust_the_pool(upstream: str) -> None:
    """Each answer releases its upstream connection: past the pool's size, requests pass."""
    with gateway(upstream, max_connections=2, connect_timeout=2) as url:
        statuses = [httpx.get(url + "/fault/odd-header").status_code for _ in range(6)]
        started = time.monotonic()
        assert httpx.get(url + "/v1/models").status_code == 200
    assert statuses == [200] * 6
    assert time.monotonic() - started < 2


def test_a_keep_alive_client_survives_upstream_faults(upstream: str) -> None:
    """A client reusing one connection gets every answer after odd headers and errors."""
    with gateway(upstream) as url, httpx.Client(base_url=url) as client:
        statuses = []
        for _ in range(10):
            statuses.append(client.get("/fault/odd-header").status_code)
            statuses.append(client.get("/fault/error").status_code)
            statuses.append(client.get("/v1/models").status_code)
    assert statuses == [200, 529, 200] * 10


def test_the_gateways_own_errors_close_the_connection() -> None:
    """A 502 the gateway makes says ``Connection: close``, so the client does not reuse it."""
    with serve(create_app(f"http://127.0.0.1:{free_port()}")) as url:
        answer = httpx.get(url + "/v1/models")
    assert answer.status_code == 502
    assert answer.headers["connection"] == "close"


def test_an_unreachable_upstream_is_named_with_its_cause() -> None:
    """ "upstream unreachable" says which URL and why (here: connection refused)."""
    dead = f"http://127.0.0.1:{free_port()}"
    with serve(create_app(dead)) as url:
        message = httpx.get(url + "/v1/models").json()["error"]["message"]
    assert message.startswith(f"upstream unreachable: {dead}: connection refused")


def test_an_upstream_error_never_shows_the_upstream_urls_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An upstream given with credentials (``http://user:pass@host``) is named without them,
    in the error the client gets and in the log line."""
    dead = f"http://gw-user:s3cret-pass@127.0.0.1:{free_port()}"
    with serve(create_app(dead)) as url:
        message = httpx.get(url + "/v1/models").json()["error"]["message"]
    assert message.startswith("upstream unreachable: http://[redacted]@127.0.0.1:")
    assert "s3cret" not in message
    assert not any("s3cret" in r.getMessage() for r in caplog.records)


def test_a_client_that_goes_away_cancels_its_upstream_request(
    upstream: str, fake: FakeUpstream
) -> None:
    """The upstream sees the disconnect soon after the client gives up, not at its answer."""
    with gateway(upstream) as url:
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(url + "/fault/slow?seconds=20", timeout=0.5)
        deadline = time.monotonic() + 5
        while not fake.cancelled and time.monotonic() < deadline:
            time.sleep(0.05)
    assert fake.cancelled == 1


def test_a_silent_upstream_is_given_up_after_the_read_timeout(upstream: str) -> None:
    """No byte within ``read_timeout``: 504 naming the timeout, the request cancelled."""
    with gateway(upstream, read_timeout=0.3) as url:
        answer = httpx.get(url + "/fault/slow?seconds=5", timeout=10)
    assert answer.status_code == 504
    assert "timed out" in answer.json()["error"]["message"]


def test_an_exhausted_pool_is_named(upstream: str) -> None:
    """Past ``max_connections`` busy, a request waits ``connect_timeout`` then gets 503
    saying the pool is exhausted (not that the upstream is unreachable)."""
    with gateway(upstream, max_connections=1, connect_timeout=0.5) as url:
        busy = threading.Thread(target=httpx.get, args=(url + "/fault/slow?seconds=3",))
        busy.start()
        time.sleep(0.5)
        answer = httpx.get(url + "/v1/models", timeout=10)
        busy.join()
    assert answer.status_code == 503
    assert "pool exhausted" in answer.json()["error"]["message"]


def test_a_non_ascii_request_header_is_forwarded(upstream: str, fake: FakeUpstream) -> None:
    """``X-Title: café`` goes upstream as the bytes that came, not as a 500."""
    with gateway(upstream) as url:
        answer = httpx.get(url + "/v1/models", headers={"x-title": "café".encode()})
    assert answer.status_code == 200
    assert fake.received[-1].headers["x-title"].encode("latin-1") == "café".encode()


def test_a_request_header_that_is_not_utf8_is_dropped_not_failed(
    upstream: str, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """A Latin-1 byte value (``caf\\xe9``) cannot pass as it came: the request goes without
    it, with one warning naming the header."""
    with gateway(upstream) as url:
        answer = httpx.get(url + "/v1/models", headers={"x-title": "café".encode("latin-1")})
    assert answer.status_code == 200
    assert "x-title" not in fake.received[-1].headers
    assert any("x-title" in r.getMessage() for r in caplog.records)


def test_a_cookie_the_upstream_sets_never_rides_on_another_request(
    upstream: str, fake: FakeUpstream
) -> None:
    """The gateway keeps no cookies: one client's never reach the upstream with another's."""
    with gateway(upstream) as url:
        assert httpx.get(url + "/fault/cookie").status_code == 200
        httpx.get(url + "/v1/models")
    assert "cookie" not in fake.received[-1].headers


def test_the_upstream_gets_no_header_the_client_did_not_send(
    upstream: str, fake: FakeUpstream
) -> None:
    """No user agent, accept or encoding of the gateway's own goes upstream."""
    with gateway(upstream) as url:
        raw_request(url, "/v1/models")
    sent = fake.received[-1].headers
    assert not {"user-agent", "accept", "accept-encoding"} & set(sent)


@pytest.mark.parametrize(
    ("target", "status"),
    [("/v1/a%00b", 400), ("/v1/" + "x" * 70_000, 414), ("/v1/a%0ab", 400)],
    ids=["nul", "long", "newline"],
)
def test_bad_paths_get_a_4xx_and_one_log_line(
    upstream: str, target: str, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    """A path the gateway cannot forward is refused with one warning and no traceback."""
    with gateway(upstream) as url, caplog.at_level(logging.INFO):
        answer = raw_request(url, target)
    assert status_of(answer) in (400, status)
    assert not any(r.exc_info for r in caplog.records)
    mine = [r for r in caplog.records if r.name == "slimtools.gateway"]
    assert len(mine) <= 1


def test_a_body_over_the_limit_gets_413(upstream: str, fake: FakeUpstream) -> None:
    """A body past ``max_body`` is refused with 413 and never reaches the upstream."""
    with gateway(upstream, max_body=1000) as url:
        declared = httpx.post(url + "/v1/messages", content=b"x" * 1001)
        chunked = httpx.post(url + "/v1/messages", content=iter([b"x" * 600, b"x" * 600]))
        fits = httpx.post(url + "/v1/files", content=b"x" * 1000)
    assert (declared.status_code, chunked.status_code, fits.status_code) == (413, 413, 200)
    assert [r.path for r in fake.received] == ["/v1/files"]


@pytest.mark.parametrize(
    ("target", "sent"),
    [("/a/../x", "/base/v1/x"), ("/a/./b/", "/base/v1/a/b/"), ("/v1/messages/../x", "/base/v1/x")],
)
def test_dot_segments_are_resolved_inside_the_base(
    upstream: str, fake: FakeUpstream, target: str, sent: str
) -> None:
    """A path with dot segments that stays inside the base goes there, resolved."""
    with serve(create_app(upstream + "/base/v1")) as url:
        assert status_of(raw_request(url, target)) == 200
    assert fake.received[-1].path == sent


@pytest.mark.parametrize("target", ["/../../x", "/%2e%2e/x", "/..%2fx", "/a/%2E%2E/../x"])
def test_paths_leaving_the_base_are_refused(upstream: str, fake: FakeUpstream, target: str) -> None:
    """No spelling of ``..`` reaches above the upstream's base path."""
    with serve(create_app(upstream + "/base/v1")) as url:
        assert status_of(raw_request(url, target)) == 400
    assert fake.received == []


def test_head_keeps_the_content_length(upstream: str) -> None:
    """An answer to HEAD keeps the length the upstream gave."""
    with gateway(upstream) as url:
        answer = httpx.head(url + "/v1/files/abc")
    assert answer.status_code == 200
    assert int(answer.headers["content-length"]) > 0


def test_expect_is_not_forwarded(upstream: str, fake: FakeUpstream) -> None:
    """``Expect: 100-continue`` is answered by the gateway, never sent upstream."""
    with gateway(upstream) as url:
        extra = b"Expect: 100-continue\r\nContent-Length: 2\r\n"
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"POST /v1/files HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n")
            assert sock.recv(1024).startswith(b"HTTP/1.1 100")
            sock.sendall(b"ok")
            assert b" 200 " in sock.recv(65536)
    assert "expect" not in fake.received[-1].headers
    assert fake.received[-1].raw == b"ok"


def test_a_doubled_v1_is_sent_once(upstream: str, fake: FakeUpstream) -> None:
    """An upstream ending in ``/v1`` and a client adding ``/v1``: one ``/v1`` goes out."""
    with serve(create_app(upstream + "/v1")) as url:
        httpx.get(url + "/v1/models")
    assert fake.received[-1].path == "/v1/models"


def test_a_path_the_upstream_url_refuses_is_named_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The HTTP client's refusal quotes the whole URL; the 400 shows it redacted."""
    import asyncio

    import aiohttp

    from slimtools.gateway._request import RefusedError
    from slimtools.gateway._upstream import Upstream

    async def refuse(self: Any, method: str, url: Any, **_: Any) -> Any:
        raise aiohttp.InvalidURL(str(url))

    monkeypatch.setattr(aiohttp.ClientSession, "request", refuse)

    async def send() -> str:
        upstream = Upstream("http://gw-user:s3cret-pass@127.0.0.1:1", Limits())
        try:
            async with upstream.exchange("GET", "/v1/x", [], b"", decoded=False):
                return ""
        except RefusedError as refused:
            return refused.message
        finally:
            await upstream.close()

    message = asyncio.run(send())
    assert message.startswith("the path cannot be forwarded: http://[redacted]@127.0.0.1:1")
    assert "s3cret" not in message

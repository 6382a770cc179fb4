"""Private by default: the stats route asks for a token and a loopback ``Host``."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from slimtools.gateway.app import create_app, gateway_of
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve

TOKEN = "a-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def gateway() -> Iterator[str]:
    """A gateway with a known stats token, in front of the scripted upstream."""
    with serve(create_upstream(FakeUpstream())) as upstream:
        app = create_app(upstream, stats_token=TOKEN, stats_hosts=["gw.internal"])
        with serve(app) as url:
            yield url


def test_stats_need_the_token(gateway: str) -> None:
    """Without the token, or with another, the stats answer 401 and show nothing."""
    missing = httpx.get(gateway + "/slimtools/stats")
    wrong = httpx.get(gateway + "/slimtools/stats", headers={"authorization": "Bearer nope"})
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert "conversations" not in missing.text + wrong.text
    assert httpx.get(gateway + "/slimtools/stats", headers=BEARER).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8787", "127.0.0.1.evil.example"])
def test_stats_refuse_a_host_that_is_not_loopback(gateway: str, host: str) -> None:
    """A page that rebinds its own name to the gateway's address is refused (DNS rebinding)."""
    answer = httpx.get(gateway + "/slimtools/stats", headers={**BEARER, "host": host})
    assert answer.status_code == 403


@pytest.mark.parametrize("host", ["localhost:8787", "[::1]:8787", "127.0.0.1", "GW.internal:1"])
def test_stats_answer_loopback_names_and_the_listen_host(gateway: str, host: str) -> None:
    """Loopback names and the names given as ``stats_hosts`` are answered."""
    answer = httpx.get(gateway + "/slimtools/stats", headers={**BEARER, "host": host})
    assert answer.status_code == 200


def test_each_app_makes_its_own_token() -> None:
    """Without a token given, each app draws a random one."""
    one, two = gateway_of(create_app("http://u")), gateway_of(create_app("http://u"))
    assert one.stats_token != two.stats_token
    assert len(one.stats_token) >= 24

"""Lone UTF-16 surrogates on the wire: a string cut inside an emoji, as JavaScript writes it.

``JSON.stringify`` writes such a string as ``"\\ud83d"``; the MCP SDK's strict JSON reader
refuses it, so without mending the answer was dropped and the call waited forever. The
upstream is the real npm ``server-memory``, its graph holding such an observation.
"""

from __future__ import annotations

import anyio
import pytest

from slimtools.proxy.upstream import UpstreamSpec, connect
from slimtools.proxy.upstreams import mend_surrogates
from tests.proxy.npm_servers import npm_server

pytestmark = pytest.mark.subprocess


async def test_an_answer_holding_a_lone_surrogate_arrives_with_a_replacement_character(
    tmp_path, monkeypatch
):
    """server-memory's graph with ``"cut \\ud83d here"``: read_graph answers, with U+FFFD."""
    memory = npm_server("@modelcontextprotocol/server-memory", "mcp-server-memory")
    graph = tmp_path / "memory.jsonl"
    line = '{"type":"entity","name":"clip","entityType":"note","observations":["cut \\ud83d here"]}'
    graph.write_text(line + "\n")
    monkeypatch.setenv("MEMORY_FILE_PATH", str(graph))
    with anyio.fail_after(30):
        async with connect(UpstreamSpec(command=[memory])) as upstream:
            result = await upstream.call("read_graph", {})
    assert result.structured_content is not None
    assert result.structured_content["entities"][0]["observations"] == ["cut \ufffd here"]


def test_mending_keeps_pairs_and_escaped_backslashes_and_replaces_lone_halves():
    """Only a lone half becomes ``\\ufffd``: a pair, ``\\\\ud83d`` (text) and others stay."""
    assert mend_surrogates('"\\ud83d\\ude00"') == '"\\ud83d\\ude00"'
    assert mend_surrogates('"a\\ud83d"') == '"a\\ufffd"'
    assert mend_surrogates('"\\ude00b"') == '"\\ufffdb"'
    assert mend_surrogates('"\\\\ud83d"') == '"\\\\ud83d"'
    assert mend_surrogates('"\\\\\\ud83d \\n \\u00e9"') == '"\\\\\\ufffd \\n \\u00e9"'
    assert mend_surrogates('"\\ud83d\\ud83d\\ude00"') == '"\\ufffd\\ud83d\\ude00"'


def test_the_installed_sdk_readers_are_the_ones_mended():
    """Both readers the mending wraps exist in the installed MCP SDK and are wrapped: an SDK
    that moves them fails here instead of silently reading strictly again."""
    from mcp.client import stdio, streamable_http

    from slimtools.proxy.upstreams import _lenient

    _lenient.install()
    assert getattr(stdio._parse_line, "_slimtools_lenient", False)
    assert isinstance(streamable_http.jsonrpc_message_adapter, _lenient._LenientAdapter)

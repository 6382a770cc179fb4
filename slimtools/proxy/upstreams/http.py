"""A streamable HTTP upstream: ``--upstream-url URL`` (or ``$SLIMTOOLS_UPSTREAM_URL``),
with ``--header`` values sent on every request."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from slimtools.proxy.upstreams._lenient import install as mend_lone_surrogates
from slimtools.proxy.upstreams.base import Given

__all__ = ["StreamableHTTPUpstream"]


class StreamableHTTPUpstream:
    """An upstream reached at a URL over streamable HTTP."""

    option = "--upstream-url"
    given_as = "--upstream-url URL"

    def recognises(self, given: Given) -> bool:
        """A URL was given."""
        return bool(given.url)

    def describe(self, given: Given) -> str:
        """The URL, its secrets redacted."""
        from slimtools.redaction import redact

        return redact(given.url or "")

    def client(self, given: Given, stack: AsyncExitStack, options: dict[str, Any]) -> Client:
        """A client over an HTTP connection pool that ``stack`` closes."""
        mend_lone_surrogates()  # in the answers (see _lenient)
        http = httpx2.AsyncClient(
            headers=dict(given.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(given.url or "", http_client=http), **options)

    def failed(self, text: str) -> str:
        """Nothing answered at the URL, or it answered with an error."""
        return f"could not be reached: {text[:200]}"

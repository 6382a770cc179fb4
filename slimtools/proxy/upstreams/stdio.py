"""A stdio upstream: a command after ``--``, started by the proxy.

It is started with the proxy's whole environment (the SDK would otherwise pass only ``HOME``,
``PATH`` and a few others), so tokens such as ``GITHUB_PERSONAL_ACCESS_TOKEN`` in a client
config's ``env`` block reach it, as they did before the proxy was put in front; on Linux it is
started through ``slimtools.proxy._orphan``, so it dies with the proxy. Its output is read
as UTF-8 with replacement characters for bytes that are not.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client, StdioServerParameters

from slimtools.proxy.upstreams._lenient import install as mend_lone_surrogates
from slimtools.proxy.upstreams.base import Given

__all__ = ["StdioUpstream"]


class StdioUpstream:
    """An upstream started as a command and spoken to over its stdin and stdout."""

    option = "--"
    given_as = "a command after --"

    def recognises(self, given: Given) -> bool:
        """A command was given."""
        return bool(given.command)

    def describe(self, given: Given) -> str:
        """The executable's name: never its arguments, which may hold a connection string,
        an API key or a token (``npx server-postgres postgresql://user:password@host/db``)."""
        return os.path.basename(given.command[0]) or given.command[0]

    def client(self, given: Given, stack: AsyncExitStack, options: dict[str, Any]) -> Client:
        """A client that starts the command (``FileNotFoundError`` when there is none)."""
        mend_lone_surrogates()  # in the answers (see _lenient)
        program = shutil.which(given.command[0], path=os.environ.get("PATH"))
        if program is None and not os.path.exists(given.command[0]):
            raise FileNotFoundError(f"no such command: {given.command[0]}")
        command = list(given.command)
        if sys.platform.startswith("linux"):
            command = [sys.executable, "-m", "slimtools.proxy._orphan", str(os.getpid()), *command]
        # An answer that is not UTF-8 (a file's Latin-1 bytes) is read with U+FFFD: with the
        # SDK's strict default, one such byte would end the connection to the upstream.
        params = StdioServerParameters(
            command=command[0],
            args=command[1:],
            env=dict(os.environ),
            cwd=given.cwd,
            encoding_error_handler="replace",
        )
        return Client(params, **options)

    def failed(self, text: str) -> str:
        """The process started but never finished the MCP handshake."""
        return f"exited before it answered (initialisation failed: {text[:200]})"

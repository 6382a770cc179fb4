"""What an upstream kind is given and what it must do: :class:`Given` and :class:`UpstreamKind`.

Kept apart from the table (``slimtools.proxy.upstreams``) so that each kind's module can name
these types without importing the table that lists it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["Given", "UpstreamKind"]


class Given(Protocol):
    """Where the upstream is, as the command line or a client config gave it
    (``slimtools.proxy.upstream.UpstreamSpec``)."""

    @property
    def command(self) -> Sequence[str]:
        """A command to start, or empty."""

    @property
    def url(self) -> str | None:
        """A URL to reach, or None."""

    @property
    def headers(self) -> Mapping[str, str]:
        """HTTP headers for a URL."""

    @property
    def cwd(self) -> str | None:
        """The folder a command starts in (None: the proxy's own)."""


class UpstreamKind(Protocol):
    """One way to reach an upstream: how it is given, named and connected, and how it fails."""

    option: str
    """The command-line option that gives this kind (``--`` for a command after it)."""
    given_as: str
    """The kind as the usage error names it (``a command after --``)."""

    def recognises(self, given: Given) -> bool:
        """True when ``given`` names an upstream of this kind."""

    def describe(self, given: Given) -> str:
        """The upstream as a person would name it, for messages the model may see: no
        argument, environment or secret of how it is reached."""

    def client(self, given: Given, stack: AsyncExitStack, options: dict[str, Any]) -> Client:
        """An ``mcp.Client`` for the upstream (``options``: its keyword arguments); whatever
        the client needs closed afterwards is pushed on ``stack``."""

    def failed(self, text: str) -> str:
        """Why connecting failed, in a few words, from the innermost error's one-line text
        (a command that cannot be started is said the same way for every kind)."""

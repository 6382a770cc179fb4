"""How the proxy reaches its upstream: an :class:`UpstreamKind` per way, one table.

Each kind is a module here holding a class that says how it is given (its command-line
option, and ``recognises`` for what the command line or a client config gave), how it is named
in messages, how it connects (an ``mcp.Client``) and how a failed connection is worded;
``UPSTREAMS`` names them, and exactly one must recognise what was given. Adding a kind is its
module plus one row (and the option that gives it, in ``slimtools.cli.proxy``).
"""

from __future__ import annotations

from slimtools.errors import ConfigurationError
from slimtools.proxy.upstreams._lenient import mend_surrogates
from slimtools.proxy.upstreams.base import Given, UpstreamKind
from slimtools.proxy.upstreams.http import StreamableHTTPUpstream
from slimtools.proxy.upstreams.stdio import StdioUpstream

__all__ = [
    "UPSTREAMS",
    "Given",
    "StdioUpstream",
    "StreamableHTTPUpstream",
    "UpstreamKind",
    "kind_of",
    "mend_surrogates",
]

UPSTREAMS: dict[str, UpstreamKind] = {"stdio": StdioUpstream(), "http": StreamableHTTPUpstream()}
"""The upstream kinds by name, in the order the usage error lists them."""


def kind_of(given: Given) -> UpstreamKind:
    """The one kind that recognises ``given``.

    Raises:
        ConfigurationError: no kind, or more than one, recognises it.
    """
    found = [kind for kind in UPSTREAMS.values() if kind.recognises(given)]
    if len(found) != 1:
        ways = " or as ".join(kind.given_as for kind in UPSTREAMS.values())
        raise ConfigurationError(f"give the upstream either as {ways}")
    return found[0]

"""Slim an MCP server you don't own: ``slimtools proxy``, ``proxy install`` and ``suggest``.

The configuration (``slimtools.proxy.config``) and the result shaping it drives are plain
Python; the server, the upstream client and ``dry-run`` import the MCP SDK
(``pip install 'slimtools[proxy]'``).
"""

from slimtools.proxy.config import (
    DEFAULT_MAX_TOKENS,
    FieldSpec,
    ProxyConfig,
    ToolOptions,
    load_config,
    parse_config,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FieldSpec",
    "ProxyConfig",
    "ToolOptions",
    "load_config",
    "parse_config",
]

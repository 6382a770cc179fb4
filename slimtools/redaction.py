"""Redaction: what of a tool's exception the model may read.

A tool that fails tells the model what went wrong (so it can retry, or try something else),
but exception messages often carry what must not reach it: connection URLs with passwords,
API keys, bearer tokens. ``Toolkit`` words every failure with an ``on_error`` hook;
:func:`describe_error`, the default, keeps the exception type and passes its message through
:func:`redact`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["MASK", "describe_error", "redact", "remove"]

MASK = "[redacted]"
"""What a removed secret becomes."""


_TOKEN_CHARS = r"[A-Za-z0-9_\-]"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # scheme://user:password@host -> scheme://[redacted]@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@:]*(?::[^\s/@]*)?@"), rf"\1{MASK}@"),
    # Authorization headers and the like: Bearer/Basic/Token <credential>
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=\-]{8,}"), rf"\1\2{MASK}"),
    # key=value and key: value for words that name secrets
    (
        re.compile(
            r"(?i)\b((?:api[_\-]?key|access[_\-]?key|secret(?:[_\-]?key)?|password|passwd|pwd|"
            r"token|auth)\s*[=:]\s*)(?!\[redacted\])[^\s,;&\"']+"
        ),
        rf"\1{MASK}",
    ),
    # Known key formats: OpenAI/Anthropic (sk-...), Stripe, GitHub, Slack, AWS, Google, JWTs.
    (re.compile(rf"\bsk-{_TOKEN_CHARS}{{16,}}"), MASK),
    (re.compile(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}"), MASK),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), MASK),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"), MASK),
    # Long hex (32+: keys, digests used as secrets) and long base64-like runs that mix
    # upper case, lower case and digits (40+: AWS secret keys, random tokens). Paths, UUIDs
    # and short commit hashes stay.
    (re.compile(r"\b[0-9a-fA-F]{32,}\b"), MASK),
    (
        re.compile(
            r"(?<![A-Za-z0-9+/=])(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])"
            r"(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}"
        ),
        MASK,
    ),
]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without URL credentials, token-like strings and the given ``secrets``.

    Args:
        text: a message meant for the model.
        secrets: exact values to remove as well (a tool's secret arguments).
    """
    text = remove(text, secrets)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def remove(text: str, values: Iterable[str]) -> str:
    """``text`` with each of ``values`` (four characters or more) replaced by ``MASK``."""
    for value in values:
        if len(value) >= 4:  # a one-letter "secret" would shred the message
            text = text.replace(value, MASK)
    return text


def describe_error(exc: Exception) -> str:
    """The default ``on_error``: ``"<ExceptionType>: <redacted message>"``."""
    message = str(exc)
    name = type(exc).__name__
    return f"{name}: {redact(message)}" if message else name

"""Redaction: what of a tool's exception the model may read.

A tool that fails tells the model what went wrong (so it can retry, or try something else),
but exception messages often carry what must not reach it: connection URLs with passwords,
API keys, bearer tokens. ``Toolkit`` words every failure with an ``on_error`` hook;
:func:`describe_error`, the default, keeps the exception type and passes its message through
:func:`redact`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "MASK",
    "PROSE_WORDS",
    "SECRET_PATTERNS",
    "SecretPattern",
    "describe_error",
    "redact",
    "remove",
]

MASK = "[redacted]"
"""What a removed secret becomes."""


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One row of the redaction table: a secret's shape and what replaces it."""

    name: str
    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str] = MASK
    """A template (``\\1`` for a group) or a function of the match, as ``re.sub`` takes."""


_KEYWORDS = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"secret[_\-]?key|private[_\-]?key|account[_\-]?key|shared[_\-]?access[_\-]?key|"
    r"credentials?|session[_\-]?id|sessionid|auth[_\-]?token|client[_\-]?secret"
)
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_UNQUOTED_STOP = r"\s,;&\"'}\])"
# Words an error message writes after "password:" or "token:" in prose ("password: required",
# "token: has expired", "api_key: missing"), and the values that mean "no value" (None, null).
# They are error vocabulary, chosen clear of the words common-password lists hold (welcome,
# secret, admin): every other unquoted value is masked, since a short lowercase word such as
# "letmein" is a password as often as it is prose.
PROSE_WORDS: tuple[str, ...] = (
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "has", "have", "had", "must",
    "should", "can", "cannot", "could", "may", "will", "does", "do", "did", "not", "no",
    "none", "null", "nil", "undefined", "empty", "blank", "missing", "required", "needed",
    "invalid", "incorrect", "wrong", "expired", "revoked", "rejected", "denied", "unknown",
    "unset", "absent", "provided", "given", "supplied", "present", "mismatch", "too", "field",
    "value", "length", "format", "type", "only", "already", "failed", "error", "forbidden",
    "unauthorized", "malformed", "disabled", "locked", "weak", "short", "changed", "reset",
    "unsupported", "truncated", "omitted",
)  # fmt: skip
"""What may follow a secret's key unquoted and stay: the whole value one of these words
(any case), perhaps ended by ``.``, ``!``, ``?`` or ``:``."""
_PROSE_VALUE = rf"(?:{'|'.join(PROSE_WORDS)})[.!?:]*(?![^{_UNQUOTED_STOP}])"

_WORD = re.compile(r"[A-Z]*[a-z]+|[A-Z]+|[0-9]+")
"""A word of a path segment, scanned left to right: ``Quarterly``, ``V``, ``2024``."""
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}\b")


def _unless_path(match: re.Match[str]) -> str:
    """``MASK`` for a long base64-like run, the run itself when it reads as a file path.

    A path starts with ``/`` (or is followed by a file extension, ``.csv``), has no ``+``
    or ``=`` (base64's own), and is words: capitalised or lower-case words of two letters
    or more (``My`` too), acronyms and numbers, no lone lower-case letter. The price,
    measured: a random 40-character base64 key that starts with ``/`` reads so about once
    in 75, so about 2 bare keys in 10,000 are kept; a key after its name
    (``aws_secret_access_key=...``) is masked by the assignment row whatever it looks like.
    """
    run = match[0]
    pathlike = run.startswith("/") or _EXTENSION.match(match.string, match.end()) is not None
    if not pathlike or "+" in run or run.endswith("="):
        return MASK
    for word in _WORD.findall(run):  # run is letters, digits and "/" here
        lower = len(word) - len(word.rstrip(string.ascii_lowercase))
        if lower == 1 and len(word) != 2:  # a lone lower-case letter ("wJalr", "ABc")
            return MASK
    return run


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    # A PEM private key, whole, from BEGIN to END (or to the end of a cut message): the
    # last line of its base64 is short and would survive any pattern on long runs.
    SecretPattern(
        "pem private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    # Authorization headers (the credential after the scheme); Cookie and Set-Cookie
    # headers (the rest of the line: every cookie in it).
    SecretPattern(
        "authorization header",
        re.compile(
            r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
            r"(?:(?:bearer|basic|token|digest|negotiate|ntlm|aws4-hmac-sha256)\s+)?)"
            r"(?!\[redacted\]|[\w\-]+\s+\[redacted\])[^\s\"',;]+"
        ),
        rf"\1{MASK}",
    ),
    SecretPattern(
        "cookie header",
        re.compile(
            r"(?im)\b((?:set-)?cookie[\"']?\s*[:=]\s*[\"']?)(?!\[redacted\])(?=[^\s\"'])"
            r"[^\r\n\"']+"
        ),
        rf"\1{MASK}",
    ),
    # scheme://user:password@host -> scheme://[redacted]@host (database DSNs, broker URLs);
    # a password with an unescaped @ in it runs to the last @ before the host.
    SecretPattern(
        "url credentials",
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@:]*(?::[^\s/]*)?@"),
        rf"\1{MASK}@",
    ),
    # Bearer/Basic/Token <credential>: only a credential-like word (a digit or a symbol in
    # it), so "token exchange failed" stays as it is.
    SecretPattern(
        "bearer credential",
        re.compile(
            r"(?i)\b(bearer|basic|token)(\s+)(?!\[redacted\])"
            r"(?=[A-Za-z0-9._~+/=\-]*[0-9._~+/=])[A-Za-z0-9._~+/=\-]{8,}"
        ),
        rf"\1\2{MASK}",
    ),
    # key=value, key: value, "key": "value", 'key': value for keys that name secrets
    # (password, api_key, access_token, client_secret, aws_secret_access_key, AccountKey...).
    # A quoted value is always masked; an unquoted one unless it is one of PROSE_WORDS, so
    # "password: required" and "token: has expired" stay while "password: hunter2" does not.
    # After a colon an unquoted value runs to the end of its line ("password: correct horse
    # battery staple" is one passphrase); after "=" it ends at a space, a comma, ";" or "&"
    # (a query string or a config line holds several pairs).
    SecretPattern(
        "secret assignment",
        re.compile(
            rf"(?i)((?<![\w\-])[\"']?(?:[\w\-]*[_\-])?(?:{_KEYWORDS})[\"']?\s*(?:=|(?P<colon>:))"
            rf"\s*)(?!\[redacted\]|[\"']\[redacted\][\"'])"
            rf"(?P<value>{_QUOTED}|(?!{_PROSE_VALUE})"
            rf"(?(colon)[^{_UNQUOTED_STOP}][^\r\n]*|[^{_UNQUOTED_STOP}]+))"
        ),
    ),
    SecretPattern("openai or anthropic key", re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")),
    SecretPattern("stripe key", re.compile(r"\b(?:[rsp]k|whsec)_(?:live_|test_)?[A-Za-z0-9]{10,}")),
    SecretPattern(
        "github token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ),
    SecretPattern("slack token", re.compile(r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}")),
    SecretPattern(
        "gitlab token", re.compile(r"\bgl(?:pat|ptt|dt|rt|soat|cbt)-[A-Za-z0-9_\-]{20,}")
    ),
    SecretPattern("hugging face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    SecretPattern(
        "slack webhook",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),
    ),
    SecretPattern("aws access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    SecretPattern("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    SecretPattern(
        "google oauth token",
        re.compile(r"\b(?:ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[0-9A-Za-z_\-]{20,})"),
    ),
    SecretPattern(
        "azure sas signature",
        re.compile(r"(?i)\b(sig=)(?!\[redacted\])[A-Za-z0-9%+/=]{16,}"),
        rf"\1{MASK}",
    ),
    SecretPattern(
        "package registry token", re.compile(r"\b(?:npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{50,})")
    ),
    SecretPattern(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"),
    ),
    # Long hex (32+: keys, digests used as secrets) and long base64-like runs that mix
    # upper case, lower case and digits (40+: AWS secret keys, Azure account keys, random
    # tokens). Paths, UUIDs and short commit hashes stay.
    SecretPattern("long hex", re.compile(r"\b[0-9a-fA-F]{32,}\b")),
    # A run that reads as a file path is kept (``_unless_path``): ``/data/Reports2024/
    # QuarterlySales2024Final.csv`` is 40 such characters and no secret.
    SecretPattern(
        "long base64",
        re.compile(
            r"(?<![A-Za-z0-9+/=])(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])"
            r"(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}"
        ),
        _unless_path,
    ),
)
"""The redaction table, applied in order (``docs/allowlist.md`` lists it with examples)."""


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    quote = value[0] if value[:1] in ('"', "'") else ""
    return f"{match.group(1)}{quote}{MASK}{quote}"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without URL credentials, token-like strings and the given ``secrets``.

    Args:
        text: a message meant for the model.
        secrets: exact values to remove as well (a tool's secret arguments).
    """
    text = remove(text, secrets)
    for row in SECRET_PATTERNS:
        if row.name == "secret assignment":
            text = row.pattern.sub(_assignment, text)
        else:
            text = row.pattern.sub(row.replacement, text)
    return text


def remove(text: str, values: Iterable[str]) -> str:
    """``text`` with each of ``values`` (four characters or more) replaced by ``MASK``."""
    for value in values:
        if len(value) >= 4:  # a one-letter "secret" would shred the message
            text = text.replace(value, MASK)
    return text


REDACT_MAX_CHARS = 64_000
"""A longer exception message is cut to this many characters before it is redacted: the
model is shown at most the first 4,000 of an error (``Toolkit.call``), and the redaction
table over a 10 MB message took seconds of the agent loop. Whatever is shown was redacted."""


def describe_error(exc: Exception) -> str:
    """The default ``on_error``: ``"<ExceptionType>: <redacted message>"`` (a message
    longer than :data:`REDACT_MAX_CHARS` cut to it first, and said so)."""
    message = str(exc)
    name = type(exc).__name__
    if len(message) > REDACT_MAX_CHARS:
        cut = len(message) - REDACT_MAX_CHARS
        return f"{name}: {redact(message[:REDACT_MAX_CHARS])}... ({cut:,} more characters cut)"
    return f"{name}: {redact(message)}" if message else name

"""The one reading of a model response's ``usage``, in every API's shape.

Anthropic Messages, OpenAI Chat Completions and Responses, and LiteLLM's dump of any of
them, as a mapping or as the SDK's object: live (:class:`~slimtools.instrumentation.CacheWatch`,
the gateway's bill) and recorded (``slimtools.transcripts.read_usage``) read through
:func:`usage_of`, so a new provider's usage is learnt here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slimtools._fields import field_of


@dataclass(frozen=True, slots=True)
class Usage:
    """What one response billed: the whole prompt, how it was billed, and the output.

    Attributes:
        prompt: every input token of the call, however billed.
        cache_read: tokens read from the cache.
        write_1h: tokens written to the 1-hour cache (Anthropic's ``ephemeral_1h``).
        cache_write: tokens written to the cache, either lifetime (Anthropic's
            ``cache_creation_input_tokens``; 0 for OpenAI, which bills no writes).
        output: output tokens.
    """

    prompt: int
    cache_read: int
    write_1h: int = 0
    cache_write: int = 0
    output: int = 0

    @property
    def input(self) -> int:
        """Tokens billed at the plain input price (neither read from the cache nor written)."""
        return self.prompt - self.cache_read - self.cache_write

    @property
    def write_5m(self) -> int:
        """Tokens written to the 5-minute cache (every write that is not a 1-hour one)."""
        return self.cache_write - self.write_1h


def usage_of(usage: Any) -> Usage:
    """Read a response's usage, as a mapping or as the SDK's object.

    Two shapes: Anthropic's ``input_tokens`` counts only the plain input, beside
    ``cache_read_input_tokens``, ``cache_creation_input_tokens`` and the writes' split by
    lifetime in ``cache_creation``; OpenAI's ``prompt_tokens`` (Chat Completions) or
    ``input_tokens`` with ``input_tokens_details`` (Responses) count the whole prompt, the
    cached part in ``cached_tokens`` of their details, and the output is
    ``completion_tokens`` or ``output_tokens``. LiteLLM gives every provider OpenAI's shape,
    and keeps Anthropic's cache fields beside it: its writes are read from them.

    Missing or malformed counts read as 0, so a response without usage never raises; reads
    and writes never exceed the prompt, and a 1-hour write never exceeds every write.
    """
    cached = _int(field_of(usage, "cache_read_input_tokens"))
    written = _int(field_of(usage, "cache_creation_input_tokens"))
    hour = _int(field_of(field_of(usage, "cache_creation"), "ephemeral_1h_input_tokens"))
    details = field_of(usage, "prompt_tokens_details") or field_of(usage, "input_tokens_details")
    if field_of(usage, "prompt_tokens") is not None or details is not None:
        prompt = _int(field_of(usage, "prompt_tokens")) or _int(field_of(usage, "input_tokens"))
        cached = _int(field_of(details, "cached_tokens")) or cached
        output = _int(field_of(usage, "completion_tokens")) or _int(
            field_of(usage, "output_tokens")
        )
    else:
        prompt = _int(field_of(usage, "input_tokens")) + cached + written
        output = _int(field_of(usage, "output_tokens"))
    cached = min(cached, prompt)
    written = min(written, prompt - cached)
    return Usage(prompt, cached, min(hour, written), written, output)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

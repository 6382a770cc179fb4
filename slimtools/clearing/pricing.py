"""Prompt-cache prices, and the rule that decides whether clearing pays under them.

Clearing rewrites history, and a provider's prompt cache serves only the unchanged prefix of
the previous request: everything after the first rewritten message is written to the cache
again. Whether that pays depends on the prices, which :class:`CachePricing` holds relative to
the uncached input price, and on how many more model calls will read the smaller history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from slimtools.errors import ConfigurationError

DEFAULT_HORIZON = 18
"""The most model calls a clear may take to pay for itself when the run's length is unknown."""


@dataclass(frozen=True, slots=True)
class CachePricing:
    """Prompt-cache prices as multiples of the uncached input price.

    Attributes:
        read: price of an input token served from the cache (a cache hit).
        write: price of an input token written to the cache (a miss that is then cached);
            1.0 where writing costs nothing extra.
        name: a label for reports.
        horizon: the most requests a clear may take to pay for itself when the run's length
            is unknown (None: as many as the run has made so far); what a run whose every
            tool is a command (category ``"command"``) counts on from its first call (see
            :func:`calls_ahead`). 18 by default, measured on recorded runs.

    Presets (``CachePricing.preset(name)``), from the providers' pricing pages in 2026 (the
    clearing guide links them): ``"anthropic"`` (5-minute cache, reads 0.1x, writes 1.25x:
    the most cautious, ``ClearingPolicy``'s default), ``"anthropic-1h"`` (reads 0.1x,
    writes 2x), ``"openai"`` and ``"gemini"`` (no write premium, reads 0.1x; older OpenAI
    models a quarter to a half), ``"none"`` (no caching: ``preset`` returns ``None``).
    """

    read: float
    write: float = 1.0
    name: str = "custom"
    horizon: int | None = DEFAULT_HORIZON

    def __post_init__(self) -> None:
        for label in ("read", "write"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigurationError(
                    f"CachePricing.{label} must be a number >= 0, got {value!r}"
                )
        horizon = self.horizon
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1
        ):
            raise ConfigurationError(
                f"CachePricing.horizon must be None or an int >= 1, got {horizon!r}"
            )
        if self.read > self.write:
            raise ConfigurationError(
                f"CachePricing.read ({self.read}) above write ({self.write}): a cache hit "
                "never costs more than a miss"
            )

    @property
    def rewrite(self) -> float:
        """What re-sending a cached token costs more when a rewrite before it breaks the cache."""
        return self.write - self.read

    def cost(self, read: int, written: int) -> float:
        """The price of one request, in uncached-input tokens."""
        return read * self.read + written * self.write

    @staticmethod
    def preset(name: str) -> CachePricing | None:
        """The preset called ``name`` (see the class docstring); ``None`` for ``"none"``."""
        try:
            return PRESETS[name]
        except (KeyError, TypeError):
            raise ConfigurationError(
                f"unknown cache preset {name!r}; expected one of {sorted(PRESETS)}"
            ) from None


PRESETS: Mapping[str, CachePricing | None] = MappingProxyType(
    {
        "anthropic": CachePricing(read=0.1, write=1.25, name="anthropic"),
        "anthropic-1h": CachePricing(read=0.1, write=2.0, name="anthropic-1h"),
        "openai": CachePricing(read=0.1, write=1.0, name="openai"),
        "gemini": CachePricing(read=0.1, write=1.0, name="gemini"),
        "none": None,
    }
)
"""Every named price model, ``"none"`` meaning no caching."""

DEFAULT_PRICING = PRESETS["anthropic"]


def pricing_of(value: Any) -> CachePricing | None:
    """A policy's ``cache=`` argument as a price model: a preset name, a model, or None."""
    if value is None or isinstance(value, CachePricing):
        return value
    if isinstance(value, str):
        return CachePricing.preset(value)
    raise ConfigurationError(
        f"cache must be a CachePricing, a preset name ({sorted(PRESETS)}) or None, got {value!r}"
    )


def calls_ahead(
    turns: int, expected_calls: int | None, horizon: int | None, *, commands_only: bool = False
) -> int:
    """The model calls a history cleared now is expected to serve (the next one included).

    With ``expected_calls`` (the run's total), what is left of it, at least one. Otherwise
    the run's age is the evidence of its length (Lindy's rule): a run that has made ``t``
    calls is expected to make about ``t`` more, bounded by ``horizon`` (default 18). A run
    whose results have all come from commands (``commands_only``: tools of category
    ``"command"``, a shell agent such as mini-swe-agent, unlike OpenHands with its editor)
    is expected to make ``horizon`` more calls from its first: coding agents at a shell
    explore a repository for tens of calls, so its age understates what is left.

    The bound is there because the rule weighs one clear now against none, not against the
    bigger clear that waiting would allow; 18 and the shell rule are measured on the shared
    transcripts (docs/clearing.md, "How many more calls will read a cleared history").
    """
    if expected_calls is not None:
        return max(1, expected_calls - turns)
    if horizon is not None:
        return horizon if commands_only else max(1, min(turns, horizon))
    return max(1, turns)

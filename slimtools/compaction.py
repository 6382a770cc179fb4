"""The two-stage pipeline: clear stale tool results first, compact only past a threshold.

Clearing is nearly lossless (handles and refetch hints survive) and costs no model call;
compaction (summarising the history) is lossy and costs one. So clear at every round end and
compact only when the history still crosses the hard threshold (by default: history above
40% of the window, or under 20% of the window free). Clearing keeps the history flat, so
the threshold is reached much later or never, and when compaction does run it summarises
one-line placeholders instead of raw results.

The summariser is any callable you supply (a cheap model call, usually): it receives the
messages to fold away and returns the summary text, or ready-made messages to put in their
place.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from slimtools.clearing import Clearer, ClearingPolicy, detect_format, view
from slimtools.clearing.audit import Audit
from slimtools.clearing.formats.base import Codec
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.clearing.manifest import render_manifest
from slimtools.errors import ConfigurationError
from slimtools.tokens import TokenCounter, count_tokens

logger = logging.getLogger("slimtools.compaction")


Summarizer: TypeAlias = Callable[[list[Any]], "str | Sequence[Any]"]
"""Messages to fold away -> the summary text (wrapped in a user message in the history's
format) or the messages to put in their place."""


@dataclass(frozen=True)
class CompactionPolicy:
    """When to compact and what to keep verbatim.

    Attributes:
        window: the model's context window, in tokens.
        history_fraction: compact when the history exceeds this share of the window
            (None: no such threshold).
        min_free_fraction: compact when less than this share of the window is free after
            the history and ``reserved`` (None: no such threshold).
        reserved: tokens outside the history that share the window: system prompt, tool
            schemas, the output budget.
        keep_turns: the most recent turns kept verbatim (never summarised).
        counter: token counter for the history's billed text.
    """

    window: int
    history_fraction: float | None = 0.4
    min_free_fraction: float | None = 0.2
    reserved: int = 0
    keep_turns: int = 2
    counter: TokenCounter = count_tokens

    def __post_init__(self) -> None:
        if not isinstance(self.window, int) or self.window <= 0:
            raise ConfigurationError(f"window must be a positive int, got {self.window!r}")
        for name in ("history_fraction", "min_free_fraction"):
            value = getattr(self, name)
            if value is not None and not 0 < value < 1:
                raise ConfigurationError(f"{name} must be None or between 0 and 1, got {value!r}")
        if self.reserved < 0:
            raise ConfigurationError("reserved must be >= 0")
        _check_keep_turns(self.keep_turns)

    @property
    def limit(self) -> int | None:
        """The largest history, in tokens, that crosses no threshold (None: no threshold)."""
        limits = []
        if self.history_fraction is not None:
            limits.append(int(self.history_fraction * self.window))
        if self.min_free_fraction is not None:
            limits.append(int(self.window * (1 - self.min_free_fraction)) - self.reserved)
        return max(0, min(limits)) if limits else None

    def should_compact(self, history_tokens: int) -> bool:
        """Whether a history of ``history_tokens`` tokens crosses a threshold."""
        if self.history_fraction is not None and history_tokens > self.history_fraction * (
            self.window
        ):
            return True
        free = self.window - self.reserved - history_tokens
        return self.min_free_fraction is not None and free < self.min_free_fraction * self.window


def history_tokens(
    history: Sequence[Any], counter: TokenCounter = count_tokens, format: str | None = None
) -> int:
    """Billed tokens of ``history`` (content, call names and arguments, result texts), each
    piece counted alone, as the clearer and the ledger count them."""
    seen = view(history, format=format)
    text = sum(counter(piece) for parts in seen.message_pieces for piece in parts)
    return text + sum(seen.message_media_tokens)


def compact(
    history: Sequence[Any],
    summarize: Summarizer,
    *,
    keep_turns: int = 2,
    format: str | None = None,
    manifest: bool = False,
) -> list[Any]:
    """Fold everything before the last ``keep_turns`` turns into a summary.

    Leading system messages stay first; the plain user messages just before the kept turns
    (the question being worked on) stay too. Tool calls and their results are kept or
    folded together: the cut falls at the start of a turn, so no pair is split. A history
    with nothing before the kept turns comes back unchanged, without calling ``summarize``.

    Args:
        history: the messages, in any format the clearing core reads.
        summarize: the messages to fold -> summary text or replacement messages.
        keep_turns: the most recent turns kept verbatim.
        format: the history format; detected when None.
        manifest: carry the manifest of the folded cleared results
            (:func:`~slimtools.clearing.manifest.render_manifest`): it is passed to a
            summariser that takes a ``manifest`` keyword, and appended verbatim to the
            summary (a message of its own after summary messages), so every cleared result
            stays refetchable after compaction.

    Raises:
        ConfigurationError: ``keep_turns`` is not an int >= 0.
        TypeError: ``summarize`` returned neither text nor a list of messages (one
            message alone, bytes, a list holding text).
    """
    _check_keep_turns(keep_turns)
    fmt = format or detect_format(history)
    codec = get_codec(fmt)
    messages = list(history)
    system_end = 0
    while system_end < len(messages) and codec.role(messages[system_end]) == "system":
        system_end += 1
    starts = view(messages, format=fmt).turn_starts
    if keep_turns == 0:
        cut = len(messages)
    elif len(starts) > keep_turns:
        cut = starts[-keep_turns]
    else:
        return messages
    while cut > system_end and _is_plain_input(codec, messages[cut - 1]):
        cut -= 1
    folded = messages[system_end:cut]
    if not folded:
        return messages
    block = render_manifest(folded, fmt) if manifest else ""
    if block and _takes_manifest(summarize):
        keyworded: Callable[..., str | Sequence[Any]] = summarize
        summary = keyworded(folded, manifest=block)
    else:
        summary = summarize(folded)
    if isinstance(summary, str):
        text = f"{summary}\n\n{block}" if block and block not in summary else summary
        replacement = [codec.text_message(text)]
    else:
        replacement = _summary_messages(codec, summary)
        if block:
            replacement.append(codec.text_message(block))
    return [*messages[:system_end], *replacement, *messages[cut:]]


@dataclass(frozen=True, slots=True)
class PipelineStep:
    """What one :meth:`ContextPipeline.step` did.

    Attributes:
        history: the history to send to the model, and to store.
        tokens_in: billed tokens of the history as given.
        tokens_cleared: after clearing.
        tokens_out: after compaction (equal to ``tokens_cleared`` when it did not run).
        cleared: tool results newly cleared in this step.
        compacted: whether compaction ran.
    """

    history: list[Any]
    tokens_in: int
    tokens_cleared: int
    tokens_out: int
    cleared: int
    compacted: bool


class ContextPipeline:
    """Clear, then compact past a threshold: call it before each model call.

    Store what it returns (compaction replaces the history; passing the original again
    would summarise it again). Clearing is incremental and monotone across calls. A
    summariser that raises leaves the history uncompacted (logged as a warning); the next
    call tries again.

    Args:
        compaction: when to compact and what to keep.
        summarize: your summariser (see :data:`Summarizer`).
        clearing: the clearing policy; True (default) for :class:`ClearingPolicy` ()'s
            defaults, False to turn the first stage off (compaction alone). Unless the
            policy sets its own ``max_context_tokens``, it gets the compaction threshold
            (``compaction.limit``): before a history would be compacted, whatever is
            clearable is cleared, whatever the cache economics say.
        format: the history format; detected when None.
        audit: a sink receiving each original tool result before it is cleared.
        manifest: hand the summariser the manifest of every cleared result it folds
            (exact call or handles, tool, size, one-line head) and carry it verbatim in the
            summary message (see :func:`compact`); on by default, so clear-then-compact
            leaves every cleared detail refetchable.
    """

    def __init__(
        self,
        compaction: CompactionPolicy,
        summarize: Summarizer,
        clearing: ClearingPolicy | bool = True,
        *,
        format: str | None = None,
        audit: Audit | None = None,
        manifest: bool = True,
    ) -> None:
        if not isinstance(compaction, CompactionPolicy):
            raise ConfigurationError(
                f"compaction must be a CompactionPolicy, got {type(compaction).__name__}"
            )
        if not isinstance(clearing, (bool, ClearingPolicy)):
            raise ConfigurationError(
                "clearing must be a ClearingPolicy, True (the defaults) or False (off), "
                f"got {clearing!r}"
            )
        self.compaction = compaction
        self.manifest = manifest
        self.summarize = summarize
        self.format = format
        self._clearer: Clearer | None = None
        if clearing is not False:
            policy = clearing if isinstance(clearing, ClearingPolicy) else ClearingPolicy()
            if policy.max_context_tokens is None and compaction.limit is not None:
                policy = policy.replace(max_context_tokens=max(1, compaction.limit))
            self._clearer = Clearer(policy, format=format, audit=audit)
        self.compactions = 0

    def __call__(self, history: Sequence[Any]) -> list[Any]:
        """The history to send (and store): cleared, and compacted when over the threshold."""
        return self.step(history).history

    def step(self, history: Sequence[Any]) -> PipelineStep:
        """:meth:`__call__` with the figures of what happened."""
        fmt = self.format or detect_format(history)
        count = self.compaction.counter
        tokens_in = history_tokens(history, count, fmt)
        cleared, newly = list(history), 0
        if self._clearer is not None:
            cleared, report = self._clearer.clear_with_report(history)
            newly = report.cleared_tool_uses
        tokens_cleared = history_tokens(cleared, count, fmt) if newly else tokens_in
        if not self.compaction.should_compact(tokens_cleared):
            return PipelineStep(cleared, tokens_in, tokens_cleared, tokens_cleared, newly, False)
        try:
            out = compact(
                cleared,
                self.summarize,
                keep_turns=self.compaction.keep_turns,
                format=fmt,
                manifest=self.manifest,
            )
        except Exception:  # a failing summariser must not stop the agent loop
            logger.warning("summariser failed; history left uncompacted", exc_info=True)
            return PipelineStep(cleared, tokens_in, tokens_cleared, tokens_cleared, newly, False)
        compacted = len(out) != len(cleared) or any(
            a is not b for a, b in zip(out, cleared, strict=True)
        )
        self.compactions += compacted
        tokens_out = history_tokens(out, count, fmt) if compacted else tokens_cleared
        return PipelineStep(out, tokens_in, tokens_cleared, tokens_out, newly, compacted)


def _check_keep_turns(keep_turns: object) -> None:
    """Refuse a ``keep_turns`` that is not an int >= 0 (``-1`` would keep all but the first
    turns)."""
    if not isinstance(keep_turns, int) or isinstance(keep_turns, bool) or keep_turns < 0:
        raise ConfigurationError(f"keep_turns must be an int >= 0, got {keep_turns!r}")


def _summary_messages(codec: Codec, summary: object) -> list[Any]:
    """The messages a summariser returned, checked: a list or tuple of messages of the
    history's format (one message alone would otherwise be read as its keys or fields)."""
    if isinstance(summary, (list, tuple)) and all(codec.role(m) is not None for m in summary):
        return list(summary)
    if isinstance(summary, (list, tuple)):
        hint = " holding other items"
    elif codec.role(summary) is not None:
        hint = "; wrap one message in a list"
    else:
        hint = ""
    raise TypeError(
        f"the summariser must return the summary text or a list of {codec.name} messages, "
        f"got {type(summary).__name__}{hint}"
    )


def _takes_manifest(summarize: Summarizer) -> bool:
    """Whether the summariser accepts a ``manifest`` keyword (or any keyword)."""
    try:
        parameters = inspect.signature(summarize).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False
    return any(
        p.kind is p.VAR_KEYWORD
        or (p.name == "manifest" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in parameters
    )


def _is_plain_input(codec: Codec, message: Any) -> bool:
    """A user (or system) message carrying no tool result: the question being worked on."""
    if codec.role(message) not in ("user", "system"):
        return False
    seen = safe_decode(codec, message)
    return not (seen.model_output or seen.results)

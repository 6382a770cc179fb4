"""Floors of one clearing pass: the least a pass that writes informative placeholders does.

Section (a) of ``bench_clearing`` times them beside the default pass and the peer, so the
speed goal (never slower than ``ClearToolUsesEdit`` at 1,000 turns) can be read against
what any pass keeping the informative placeholder costs:

- the *informative floor* does it with the engine's own parts (its codec, its renderer and
  its copy), nothing decided;
- the *fused floor* is a prototype of the least pure-Python pass that writes the default's
  very bytes for the benchmark's history: one loop, one format, the default template
  inlined, no decisions, no state, no report. It is a floor, not a design: it serves one
  history shape, and :func:`check_fused_floor` refuses to time it unless its output is the
  default pass's, message for message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from slimtools.clearing import ClearingPolicy, clear_stale_results
from slimtools.clearing.formats import with_changes
from slimtools.clearing.formats.view import get_codec
from slimtools.clearing.marker import seal
from slimtools.clearing.placeholder import MAX_PLACEHOLDER_CHARS
from slimtools.clearing.replay import PlaceholderRenderer
from slimtools.tokens import count_tokens


def informative_floor(messages: Sequence[Any], renderer: PlaceholderRenderer) -> list[Any]:
    """The least an informative pass does with the engine's parts: each message decoded, its
    calls and results counted, each result's default placeholder rendered and its message
    copied once."""
    codec, calls, out, turn = get_codec("langchain"), {}, list(messages), 0
    for i, message in enumerate(messages):
        model, _, found, results = codec.decode(message)
        turn += model
        for call in found:
            count_tokens(f"{call.name} {call.args_text}")
            calls[call.id] = call
        for result in results:
            call = calls.pop(result.call_id)
            tokens = count_tokens(result.text)
            text = renderer.text(result, tool=call.name, args=call.args, tokens=tokens, turn=turn)
            out[i] = with_changes(message, {"content": text})
    return out


def fused_floor(
    messages: Sequence[Any], *, keep: int, max_chars: int, head: int = 200
) -> list[Any]:
    """The fused prototype: every result but the last ``keep`` replaced by the default
    placeholder, built in one loop over the messages' fields (single-argument calls with
    ASCII results, as the benchmark's history holds); ``max_chars`` and ``head`` are the
    placeholder's bound and head (``MAX_PLACEHOLDER_CHARS`` and the policy's ``keep_head``)."""
    out, calls = list(messages), {}
    tokens = 0  # the history's total, counted as any pass must (nothing is decided with it)
    last = len(messages) - 2 * keep  # a call and its result per turn
    for i, message in enumerate(messages):
        fields = message.__dict__
        kind = fields["type"]
        if kind == "ai":
            for call in fields["tool_calls"]:
                ((key, value),) = call["args"].items()
                args = f"{key}={orjson.dumps(value).decode()}"
                tokens += (len(call["name"]) + len(orjson.dumps(call["args"])) + 4) // 4
                calls[call["id"]] = (call["name"], args)
        elif kind == "tool":
            text = fields["content"]
            size = (len(text) + 3) // 4
            tokens += size
            name, args = calls.pop(fields["tool_call_id"])
            if i >= last:
                continue
            body = (
                f"{name}({args}) returned {len(text):,} chars (~{size:,} tokens); removed to "
                f"save context.\nHead: {' '.join(text[: head * 2 + 16].split())[:head]}\n"
                f"To see it again, call {name}({args}) again."
            )
            out[i] = with_changes(message, {"content": seal(body, max_chars)})
        else:
            tokens += (len(fields["content"]) + 3) // 4
    return out


def check_fused_floor(messages: Sequence[Any], policy: ClearingPolicy, keep: int) -> None:
    """Raise unless :func:`fused_floor` writes what the default pass writes: a floor that
    does less than the pass it bounds would bound nothing."""
    fused = fused_floor(messages, keep=keep, max_chars=MAX_PLACEHOLDER_CHARS, head=policy.keep_head)
    default = clear_stale_results(messages, policy)
    differ = [i for i, (a, b) in enumerate(zip(fused, default, strict=False)) if a != b]
    if len(fused) != len(default) or differ:
        raise AssertionError(f"the fused floor differs from the default pass at {differ[:5]}")

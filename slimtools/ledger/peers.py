"""Other agents' tool-result clearing, replayed as per-call steps so the ledger can bill them.

Each function here returns a *step*: the history so far in, what the model would see out,
as ``TokenLedger.measure(history, clear=step)`` takes it. A step returns a new list in the
history's own format (LangChain, OpenAI Chat, OpenAI Responses or Anthropic) with the same
messages in the same order; only the contents of some tool results change, so every call
keeps its result and ``slimtools.clearing.view`` reads the output like any other history.
Unchanged messages are the caller's own objects.

All three peers are stateless: each decides from the history it is given, as its original
does before every model call, so a step called before each call reproduces it exactly.

- :func:`last_n_observations_step`: SWE-agent's ``LastNObservations`` history processor.
- :func:`observation_masking_step`: the observation masking of Lindenbauer et al. (2025),
  "The Complexity Trap".
- :func:`tool_output_trimmer_step`: the OpenAI Agents SDK's ``ToolOutputTrimmer``, run
  through the SDK's own class.
- :func:`context_editing_step` / :func:`langchain_defaults_step`: LangChain v1's
  ``ContextEditingMiddleware``, which runs, before *every* model call, a deep copy of the
  whole history and then ``ClearToolUsesEdit.apply`` on it (Anthropic's defaults: trigger at
  100,000 tokens counted with ``count_tokens_approximately``, keep the 3 most recent tool
  results, placeholder ``"[cleared]"``), with LangChain's own classes on the history
  converted to LangChain messages (:func:`to_langchain_messages`). When LangChain is not
  installed, :func:`langchain_defaults_step` falls back to the same documented settings
  applied per call by the slimtools core (``ClearingPolicy.from_anthropic(placeholder=
  "[cleared]")``, a fresh clearer per call), whose placeholder carries slimtools' short
  marker and so is a few tokens longer.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeAlias

from slimtools.clearing import ClearingPolicy, ResultView, clear_stale_results, detect_format, view
from slimtools.clearing.formats._objects import get
from slimtools.clearing.formats.media import TEXT_BLOCK_TYPES
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.errors import ConfigurationError

__all__ = [
    "OBSERVATION_PLACEHOLDER",
    "Step",
    "context_editing_step",
    "has_langchain",
    "langchain_defaults_step",
    "last_n_observations_step",
    "observation_masking_step",
    "peer_steps",
    "to_agents_input",
    "to_langchain_messages",
    "tool_output_trimmer_step",
]

Step: TypeAlias = Callable[[list[Any]], list[Any]]
"""A per-call step: the history before a model call in, the history the model sees out."""

OBSERVATION_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
"""SWE-agent's text for an elided observation (also the Complexity Trap's); ``lines`` is the
number of text lines of the original. SWE-agent appends `` ({images} images omitted)``."""

_MASKED = re.compile(r"Old environment output: \(\d+ lines omitted\)( \(\d+ images omitted\))?")
_IMAGE_TYPES = frozenset({"image_url", "image", "input_image"})


# -- SWE-agent ---------------------------------------------------------------------------


def last_n_observations_step(
    n: int = 5,
    *,
    polling: int = 1,
    always_remove_output_for_tags: Collection[str] = frozenset({"remove_output"}),
    always_keep_output_for_tags: Collection[str] = frozenset({"keep_output"}),
) -> Step:
    """SWE-agent's ``LastNObservations`` history processor as a per-call step.

    Reproduces ``sweagent/agent/history_processors.py`` of SWE-agent/SWE-agent at commit
    3ea751c087f32b16e039a2233dd6eefecef325d5, which "elides all but the last n observations"
    (the SWE-agent paper's setting is ``n=5``). Its rules, mapped onto a tool-call history:

    - An observation is a tool result (SWE-agent's ``message_type: "observation"`` messages
      are its tool results and the task statement). SWE-agent also counts the task statement,
      its *instance template*, as the first observation and never elides it; here the task is
      a user message, which no step touches, and it is counted as that first observation.
    - With ``K`` observations (the task included), SWE-agent elides observations ``1`` up to
      ``(K // polling) * polling - n`` (exclusive): with ``polling=1`` every result but the
      last ``n``; a larger ``polling`` moves the cut only every ``polling`` observations, so
      between ``n`` and ``n + polling - 1`` results stay (SWE-agent's help for prompt caching).
    - An elided result reads ``"Old environment output: (N lines omitted)"``, ``N`` the text
      lines of the original (``str.splitlines`` over its text parts), followed by
      ``" (M images omitted)"`` when it held images.
    - A result whose message (a dict) has ``is_demo: true`` is a demonstration: not counted and
      not elided. A message's ``tags`` containing one of ``always_keep_output_for_tags`` keeps
      its results, one of ``always_remove_output_for_tags`` elides them even among the last
      ``n``. Histories from other harnesses carry neither key, so there the step is the plain
      count.

    One deviation makes the step idempotent: SWE-agent only ever processes its raw history,
    so a result that already reads as its placeholder is left as it is rather than re-counted
    as one line.

    Raises:
        ConfigurationError: ``n`` or ``polling`` is not an int >= 1, or a tag option is not
            a collection of strings.
    """
    _check_int("n", n, 1)
    _check_int("polling", polling, 1)
    remove = _check_tags("always_remove_output_for_tags", always_remove_output_for_tags)
    keep = _check_tags("always_keep_output_for_tags", always_keep_output_for_tags)

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        seen = view(messages, fmt)
        observations = [
            i for i, r in enumerate(seen.results) if not get(messages[r.position], "is_demo")
        ]
        last_removed = max(0, ((len(observations) + 1) // polling) * polling - n)
        elided = set(observations[: max(0, last_removed - 1)])

        def masks(index: int, result: ResultView) -> bool:
            tags = _tags(messages[result.position])
            return (index in elided and not tags & keep) or bool(tags & remove)

        return _mask(messages, fmt, seen.results, masks, images=True)

    return step


# -- The Complexity Trap -----------------------------------------------------------------


def observation_masking_step(window: int = 10) -> Step:
    """The observation masking of "The Complexity Trap" as a per-call step.

    Lindenbauer, Slinko, Felder, Bogomolov, Zharov (2025), "The Complexity Trap: Simple
    Observation Masking Is as Efficient as LLM Summarization for Agent Context Management"
    (arXiv:2508.21433), code at github.com/JetBrains-Research/the-complexity-trap, commit
    adfaa1a18b8b3500abb7537101b2bdcefa31f22a. Before turn ``t`` every observation of a turn
    ``i < t - window`` is replaced by a placeholder, so the observations of the last
    ``window`` turns stay whole; reasoning and actions are never touched. Their main
    experiments use ``window=10`` (config ``default_no_demo_N=1_M=10.yaml``).

    Their code is SWE-agent's ``LastNObservations`` with ``n=window`` in a scaffold that makes
    exactly one tool call per turn, so one observation is one turn. Here a turn is one model
    call and every result of a masked turn is masked, which is the paper's definition and
    equals their code on one-call-per-turn histories. The placeholder is their code's:
    ``"Old environment output: (N lines omitted)"`` with ``N`` the text lines of the original
    (their fork drops SWE-agent's images suffix). A result already holding it is left alone.

    Raises:
        ConfigurationError: ``window`` is not an int >= 0.
    """
    _check_int("window", window, 0)

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        seen = view(messages, fmt)
        cut = seen.turns - window  # the prompt holds turns 1..t-1; mask turns i < t - window
        return _mask(messages, fmt, seen.results, lambda _, r: r.turn <= cut, images=False)

    return step


# -- OpenAI Agents SDK -------------------------------------------------------------------


def tool_output_trimmer_step(trimmer: Any = None) -> Step:
    """What the OpenAI Agents SDK's ``ToolOutputTrimmer`` does to the input of each model call.

    The SDK (``agents.extensions.ToolOutputTrimmer``, a ``call_model_input_filter`` for
    ``RunConfig``) runs the real class on every call. Its defaults: ``recent_turns=2`` (the
    last two *user* messages and everything after them are never touched; with fewer than
    two user messages nothing is), ``max_output_chars=500`` (only older outputs longer than
    that are trimmed), ``preview_chars=200`` and ``trimmable_tools=None`` (every tool). A
    trimmed string output becomes ``"[Trimmed: <tool> output — <N> chars → 200 char
    preview]\\n<first 200 chars>..."``; structured (multimodal) outputs get a shorter header
    and drop their images. Tool results are not user messages, so an autonomous run with one
    task message is never trimmed.

    OpenAI Responses histories go to the trimmer as they are (it trims dict items only, as
    in the SDK). Other formats are converted with :func:`to_agents_input`, trimmed, and each
    trimmed output is written back into its own result.

    Args:
        trimmer: a configured ``ToolOutputTrimmer``; the SDK's defaults when None.

    Raises:
        ImportError: the Agents SDK is not installed (``pip install 'slimtools[openai-agents]'``).
        ConfigurationError: ``trimmer`` is not callable.
    """
    if trimmer is not None and not callable(trimmer):
        raise ConfigurationError(f"trimmer must be a ToolOutputTrimmer, got {trimmer!r}")
    try:
        from agents import Agent
        from agents.extensions import ToolOutputTrimmer
        from agents.run_config import CallModelData, ModelInputData
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the Agents SDK's ToolOutputTrimmer needs: pip install 'slimtools[openai-agents]'"
        ) from exc
    trimmer = trimmer if trimmer is not None else ToolOutputTrimmer()
    agent: Any = Agent(name="slimtools-replay")  # the filter's required field; unused by it

    def run(items: list[Any]) -> list[Any]:
        data = CallModelData(ModelInputData(input=items, instructions=None), agent, None)
        filtered = list(trimmer(data).input)
        if len(filtered) != len(items):
            raise RuntimeError("ToolOutputTrimmer changed the number of input items")
        return filtered

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        if fmt == "openai_responses":
            return run(list(messages))
        items, origins = to_agents_input(messages, fmt)
        changes: dict[int, dict[int, str]] = {}
        for before, after, origin in zip(items, run(items), origins, strict=True):
            if after is not before and origin is not None:
                position, slot = origin
                changes.setdefault(position, {})[slot] = str(after["output"])
        return _rewrite(messages, fmt, changes)

    return step


def to_agents_input(
    history: Sequence[Any], format: str | None = None
) -> tuple[list[dict[str, Any]], list[tuple[int, int] | None]]:
    """A history as Agents SDK input items, with where each tool output came from.

    Model messages become an assistant message (their text, if any) and one
    ``function_call`` item per call; each tool result becomes a ``function_call_output``
    item (text as is, multimodal parts as ``input_text``/``input_image``); user and system
    messages become role messages. An Anthropic user message that only carries tool results
    is not a user message in the SDK's sense and yields no user item.

    Returns:
        The items, and per item ``(message position, result slot)`` for tool outputs (the
        slot the clearing codec uses) or None.
    """
    fmt = format or detect_format(history)
    codec = get_codec(fmt)
    items: list[dict[str, Any]] = []
    origins: list[tuple[int, int] | None] = []
    for position, message in enumerate(history):
        decoded = safe_decode(codec, message)
        if decoded.model_output:
            if decoded.content_text:
                items.append({"role": "assistant", "content": decoded.content_text})
                origins.append(None)
            for call in decoded.calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.args_text,
                    }
                )
                origins.append(None)
            continue
        for result in decoded.results:
            output = _agents_output(codec.result_content(message, result.slot))
            items.append(
                {"type": "function_call_output", "call_id": result.call_id, "output": output}
            )
            origins.append((position, result.slot))
        role = _role(message)
        if role in ("system", "developer") or (
            role == "user" and (decoded.content_text or not decoded.results)
        ):
            items.append({"role": role, "content": decoded.content_text})
            origins.append(None)
    return items, origins


def peer_steps() -> dict[str, Step]:
    """The peers of issue 8 with their published defaults, by label, for reports and benchmarks.

    LangChain's ``ClearToolUsesEdit`` is not here: it replays on LangChain messages, see
    :func:`langchain_defaults_step`.
    """
    return {
        "swe-agent last 5 observations": last_n_observations_step(5),
        "complexity trap, 10-turn window": observation_masking_step(10),
        "agents sdk ToolOutputTrimmer": tool_output_trimmer_step(),
    }


# -- LangChain ----------------------------------------------------------------------------


def has_langchain() -> bool:
    """Whether LangChain v1 (``langchain.agents.middleware``) can be imported."""
    try:
        import langchain.agents.middleware.context_editing  # noqa: F401
    except ImportError:
        return False
    return True


def context_editing_step(
    edit: Any = None, *, deep_copy: bool = True
) -> Callable[[list[Any]], list[Any]]:
    """What ``ContextEditingMiddleware(edits=[edit])`` does to the messages of each call.

    Args:
        edit: a ``ClearToolUsesEdit``; LangChain's defaults when None.
        deep_copy: copy the history as the middleware does (``copy.deepcopy``). The edit
            only ever replaces list entries (``model_copy``), so a shallow copy gives the
            same messages; measuring code uses it to share unchanged message objects.

    Returns:
        A callable from LangChain messages to the edited copy the model would receive.
    """
    try:
        from langchain.agents.middleware.context_editing import ClearToolUsesEdit
        from langchain_core.messages.utils import count_tokens_approximately
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "LangChain's ClearToolUsesEdit needs: pip install 'slimtools[langchain]'"
        ) from exc
    edit = edit if edit is not None else ClearToolUsesEdit()

    def step(messages: list[Any]) -> list[Any]:
        edited = copy.deepcopy(list(messages)) if deep_copy else list(messages)
        edit.apply(edited, count_tokens=count_tokens_approximately)
        return edited

    return step


def _fallback_step(messages: list[Any]) -> list[Any]:
    policy = ClearingPolicy.from_anthropic(placeholder="[cleared]")
    return clear_stale_results(messages, policy)


def langchain_defaults_step(
    history: Sequence[Any],
) -> tuple[list[Any], Callable[[list[Any]], list[Any]]]:
    """The history to replay and the per-call step that reproduces LangChain's defaults.

    With LangChain installed, the history converted to LangChain messages and
    :func:`context_editing_step`; without it, the history as given and a per-call
    emulation of the same documented defaults through the slimtools core.
    """
    if not has_langchain():
        return list(history), _fallback_step
    return to_langchain_messages(history), context_editing_step(deep_copy=False)


def to_langchain_messages(history: Sequence[Any], format: str | None = None) -> list[Any]:
    """Convert an OpenAI Chat or Anthropic history to LangChain messages.

    OpenAI Chat goes through LangChain's own ``convert_to_messages``. Anthropic messages
    become ``AIMessage`` (text blocks as content, ``tool_use`` as ``tool_calls``; thinking
    blocks are dropped, as the clearing core does not bill them either) and, for each user
    message, one ``ToolMessage`` per ``tool_result`` block followed by a ``HumanMessage``
    for the remaining blocks. LangChain histories are returned as they are.
    """
    from langchain_core.messages import convert_to_messages

    fmt = format or detect_format(history)
    if fmt == "langchain":
        return list(history)
    if fmt == "openai_chat":
        return list(convert_to_messages([_chat_dict(m) for m in history]))
    if fmt == "anthropic":
        return [m for message in history for m in _from_anthropic(message)]
    raise ValueError(f"cannot convert a {fmt} history to LangChain messages")


def _chat_dict(message: dict[str, Any]) -> dict[str, Any]:
    """LangChain wants string content; OpenAI allows None next to tool calls."""
    if message.get("content") is None:
        return {**message, "content": ""}
    return message


def _from_anthropic(message: dict[str, Any]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    text = "\n".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    if message.get("role") == "assistant":
        calls = [
            {"id": b["id"], "name": b["name"], "args": b.get("input") or {}}
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        return [AIMessage(content=text, tool_calls=calls)]
    out: list[Any] = [
        ToolMessage(
            content=_result_content(b.get("content")),
            tool_call_id=b["tool_use_id"],
            status="error" if b.get("is_error") else "success",
        )
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    rest = [b for b in blocks if b.get("type") != "tool_result"]
    if rest:
        plain = all(b.get("type") == "text" for b in rest)
        out.append(HumanMessage(content=text if plain else rest))
    return out


def _result_content(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, (str, list)):
        return content
    return json.dumps(content)


# -- shared plumbing ---------------------------------------------------------------------


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_tags(name: str, value: Any) -> frozenset[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise ConfigurationError(f"{name} must be a collection of tag strings, not {value!r}")
    if not all(isinstance(tag, str) for tag in value):
        raise ConfigurationError(f"{name} must hold only strings, got {sorted(map(repr, value))}")
    return frozenset(value)


def _tags(message: Any) -> frozenset[str]:
    tags = get(message, "tags")
    if not isinstance(tags, (list, tuple, set, frozenset)):
        return frozenset()
    return frozenset(t for t in tags if isinstance(t, str))


def _mask(
    messages: list[Any],
    fmt: str,
    results: Sequence[ResultView],
    masks: Callable[[int, ResultView], bool],
    *,
    images: bool,
) -> list[Any]:
    """Replace each result ``masks(index, result)`` picks by SWE-agent's placeholder."""
    codec = get_codec(fmt)
    changes: dict[int, dict[int, str]] = {}
    slots: dict[int, tuple[int, ...]] = {}
    seen_in: dict[int, int] = {}
    for index, result in enumerate(results):
        k = seen_in[result.position] = seen_in.get(result.position, -1) + 1
        if not masks(index, result) or _MASKED.fullmatch(result.text):
            continue
        message = messages[result.position]
        if result.position not in slots:
            slots[result.position] = tuple(r.slot for r in safe_decode(codec, message).results)
        slot = slots[result.position][k]
        lines, pictures = _content_stats(codec.result_content(message, slot))
        text = OBSERVATION_PLACEHOLDER.format(lines=lines)
        if images and pictures:
            text += f" ({pictures} images omitted)"
        changes.setdefault(result.position, {})[slot] = text
    return _rewrite(messages, fmt, changes)


def _rewrite(messages: list[Any], fmt: str, changes: dict[int, dict[int, str]]) -> list[Any]:
    """A new list with the given results replaced; every other message is the same object."""
    out = list(messages)
    if changes:
        codec = get_codec(fmt)
        for position, texts in changes.items():
            out[position] = codec.replace_results(out[position], texts)
    return out


def _content_stats(content: Any) -> tuple[int, int]:
    """Text lines and images of a result's content, counted as SWE-agent counts them."""
    if isinstance(content, str):
        return len(content.splitlines()), 0
    if not isinstance(content, (list, tuple)):
        return (0, 0) if content is None else (len(str(content).splitlines()), 0)
    lines = images = 0
    for part in content:
        kind = get(part, "type")
        if isinstance(part, str):
            lines += len(part.splitlines())
        elif kind in TEXT_BLOCK_TYPES and isinstance(get(part, "text"), str):
            lines += len(get(part, "text").splitlines())
        elif kind in _IMAGE_TYPES:
            images += 1
    return lines, images


def _role(message: Any) -> str | None:
    """``user``, ``system``, ``developer``, ... for dicts and SDK objects; LangChain's types."""
    role = get(message, "role")
    if isinstance(role, str):
        return role
    return {"human": "user", "system": "system"}.get(get(message, "type"))


def _agents_output(content: Any) -> Any:
    """A result's content as an Agents SDK ``function_call_output`` output."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, (list, tuple)):
        return str(content)
    parts: list[Any] = []
    for part in content:
        kind = get(part, "type")
        if isinstance(part, str):
            parts.append({"type": "input_text", "text": part})
        elif kind in TEXT_BLOCK_TYPES and isinstance(get(part, "text"), str):
            parts.append({"type": "input_text", "text": get(part, "text")})
        elif kind in _IMAGE_TYPES and (url := _image_url(part)) is not None:
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append(part)  # the SDK leaves outputs with parts it does not know untrimmed
    return parts


def _image_url(part: Any) -> str | None:
    """The URL (or data URL) of an OpenAI, Responses or Anthropic image part."""
    url = get(part, "image_url")
    if isinstance(url, str):
        return url
    if isinstance(get(url, "url"), str):
        return str(get(url, "url"))
    source = get(part, "source")
    if get(source, "type") == "base64":
        return f"data:{get(source, 'media_type')};base64,{get(source, 'data')}"
    if get(source, "type") == "url" and isinstance(get(source, "url"), str):
        return str(get(source, "url"))
    return None

"""Build agent histories in the four formats, by hand (``script``) or with hypothesis.

A history is first described neutrally as a list of :class:`Turn` (an optional user message,
then one assistant message with zero or more parallel calls, each with an optional result),
then rendered into LangChain, OpenAI Chat, OpenAI Responses or Anthropic form, so every
behaviour can be tested in every format from one description.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import orjson
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from slimtools.clearing import DEFAULT_RETENTION, PRESETS, ClearingPolicy

FORMATS = ("langchain", "openai_chat", "openai_responses", "anthropic")
TOOLS = ("search_logs", "read_file", "bash", "create_issue", "load_dataset", "getRecord", "x")
IMAGE = "data:image/png;base64,iVBORw0KGgo="


@dataclass(frozen=True)
class Res:
    """A tool result: text, or a list of ("text", s) / ("image", url) parts."""

    content: str | tuple[tuple[str, str], ...]
    is_error: bool = False


@dataclass(frozen=True)
class Call:
    id: str
    tool: str
    args: dict[str, Any]
    result: Res | None  # None: an orphan call (the run crashed before the result)


@dataclass(frozen=True)
class Turn:
    calls: tuple[Call, ...] = ()
    user: str | None = None
    text: str = ""
    orphans: tuple[tuple[str, Res], ...] = field(default=())  # results with unknown ids


def big(word: str = "output", n: int = 120) -> str:
    """A result long enough to be worth clearing."""
    return " ".join(f"{word}{i}" for i in range(n))


def script(*tools_per_turn: str | tuple[str, ...], size: int = 120) -> list[Turn]:
    """Turns with one (or, given a tuple, several parallel) calls each, all with big results."""
    turns, n = [], 0
    for tools in tools_per_turn:
        names = (tools,) if isinstance(tools, str) else tools
        calls = []
        for name in names:
            calls.append(Call(f"call_{n}", name, {"q": n}, Res(big(f"r{n}_", size))))
            n += 1
        turns.append(Turn(tuple(calls), user="go" if not turns else None))
    return turns


def render(fmt: str, turns: list[Turn]) -> list[Any]:
    """The history of ``turns`` in format ``fmt``."""
    return {
        "langchain": _langchain,
        "openai_chat": _chat,
        "openai_responses": _responses,
        "anthropic": _anthropic,
    }[fmt](turns)


def _parts(res: Res, text_type: str, image: Any) -> Any:
    if isinstance(res.content, str):
        return res.content
    return [{"type": text_type, "text": v} if k == "text" else image for k, v in res.content]


def _langchain(turns: list[Turn]) -> list[Any]:
    out: list[Any] = []
    img = {"type": "image_url", "image_url": {"url": IMAGE}}
    for i, turn in enumerate(turns):
        if turn.user is not None:
            out.append(HumanMessage(turn.user, id=f"h{i}"))
        calls = [{"name": c.tool, "args": c.args, "id": c.id} for c in turn.calls]
        out.append(AIMessage(turn.text, tool_calls=calls, id=f"a{i}"))
        for cid, res in [*((c.id, c.result) for c in turn.calls), *turn.orphans]:
            if res is not None:
                status = "error" if res.is_error else "success"
                out.append(
                    ToolMessage(
                        _parts(res, "text", img), tool_call_id=cid, id=f"t_{cid}", status=status
                    )
                )
    return out


def _chat(turns: list[Turn]) -> list[Any]:
    out: list[Any] = []
    img = {"type": "image_url", "image_url": {"url": IMAGE}}
    for turn in turns:
        if turn.user is not None:
            out.append({"role": "user", "content": turn.user})
        msg: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.tool, "arguments": orjson.dumps(c.args).decode()},
                }
                for c in turn.calls
            ]
        out.append(msg)
        for cid, res in [*((c.id, c.result) for c in turn.calls), *turn.orphans]:
            if res is not None:
                out.append(
                    {"role": "tool", "tool_call_id": cid, "content": _parts(res, "text", img)}
                )
    return out


def _responses(turns: list[Turn]) -> list[Any]:
    out: list[Any] = []
    img = {"type": "input_image", "image_url": IMAGE}
    for turn in turns:
        if turn.user is not None:
            out.append({"role": "user", "content": turn.user})
        if turn.text:
            out.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text}],
                }
            )
        for c in turn.calls:
            args = orjson.dumps(c.args).decode()
            out.append(
                {"type": "function_call", "call_id": c.id, "name": c.tool, "arguments": args}
            )
        if not turn.calls and not turn.text:
            out.append({"type": "reasoning", "summary": []})
        for cid, res in [*((c.id, c.result) for c in turn.calls), *turn.orphans]:
            if res is not None:
                output = _parts(res, "input_text", img)
                out.append({"type": "function_call_output", "call_id": cid, "output": output})
    return out


def _anthropic(turns: list[Turn]) -> list[Any]:
    out: list[Any] = []
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    for turn in turns:
        if turn.user is not None:
            out.append({"role": "user", "content": turn.user})
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.tool, "input": c.args} for c in turn.calls
        ]
        out.append({"role": "assistant", "content": blocks or "ok"})
        results = []
        for cid, res in [*((c.id, c.result) for c in turn.calls), *turn.orphans]:
            if res is not None:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": cid}
                block["content"] = _parts(res, "text", img)
                if res.is_error:
                    block["is_error"] = True
                results.append(block)
        if results:
            out.append({"role": "user", "content": results})
    return out


# -- hypothesis ----------------------------------------------------------------------------

_words = st.sampled_from(["alpha", "beta", "错误", "line\n", "  ", "{", "[", "é", "x" * 30])
_text = st.lists(_words, min_size=0, max_size=300).map("".join)
_envelope = st.lists(
    st.fixed_dictionaries({"handle": st.text("abcdef0123", min_size=4, max_size=8)}),
    min_size=0,
    max_size=5,
).map(
    lambda briefs: orjson.dumps(
        {"total": len(briefs) * 7, "briefs": [{**b, "title": big("t", 20)} for b in briefs],
         "hint": "more: search_logs(page=2)"}
    ).decode()
)  # fmt: skip
_array = st.integers(1, 60).map(
    lambda n: orjson.dumps([{"id": i, "v": "x" * 9} for i in range(n)]).decode()
)
_content = st.one_of(
    _text,
    _envelope,
    _array,
    st.just(""),
    st.integers(20, 200).map(lambda n: big("w", n)),
    st.lists(st.tuples(st.just("text"), _text), min_size=1, max_size=3).map(tuple),
    st.tuples(st.tuples(st.just("text"), _text), st.just(("image", IMAGE))).map(tuple),
)
results = st.builds(Res, _content, st.booleans())
_args = st.dictionaries(
    st.sampled_from(["q", "path", "page", "cmd"]), st.integers(0, 99) | _text, max_size=3
)


@st.composite
def turns(draw: st.DrawFn, max_turns: int = 12) -> list[Turn]:
    """A random neutral history: parallel calls, errors, empty, multimodal, orphans."""
    out, n = [], 0
    for i in range(draw(st.integers(0, max_turns))):
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            result = draw(st.none() | results) if draw(st.integers(0, 9)) == 0 else draw(results)
            calls.append(Call(f"call_{n}", draw(st.sampled_from(TOOLS)), draw(_args), result))
            n += 1
        orphans = ()
        if draw(st.integers(0, 12)) == 0:
            orphans = ((f"ghost_{i}", draw(results)),)
        user = draw(st.none() | st.just("continue")) if i else "task"
        out.append(
            Turn(
                tuple(calls),
                user=user,
                text=draw(st.sampled_from(["", "thinking"])),
                orphans=orphans,
            )
        )
    return out


policies = st.builds(
    ClearingPolicy,
    keep_turns=st.integers(0, 3),
    keep_head=st.sampled_from([0, 40, 200]),
    keep=st.none() | st.integers(0, 4),
    trigger=st.none() | st.integers(0, 3000) | st.tuples(st.just("tool_uses"), st.integers(0, 6)),
    clear_at_least=st.none() | st.integers(0, 800),
    clear_tool_inputs=st.booleans(),
    retention=st.dictionaries(
        st.sampled_from(TOOLS), st.none() | st.integers(0, 4), max_size=2
    ).map(lambda tools: {**DEFAULT_RETENTION, **tools}),
    cache=st.none()
    | st.builds(
        lambda name, horizon: dataclasses.replace(PRESETS[name], horizon=horizon),
        st.sampled_from(["anthropic", "openai", "anthropic-1h"]),
        st.none() | st.integers(1, 8) | st.just(18),
    ),
    max_context_tokens=st.none() | st.integers(1, 4000),
    supersede=st.booleans(),
)


_READS = ("get", "read", "fetch", "list", "find", "search", "lookup", "show", "view", "query")
_NOUNS = ("user", "inbox", "card", "job", "process", "token", "file", "repo", "issue", "page")
_EFFECTS = ("charge", "clear", "rotate", "kill", "next", "delete", "send", "run", "pop", "reset")
_JOINS = ("and", "then")


def _action(verbs: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.tuples(st.sampled_from(verbs), st.lists(st.sampled_from(_NOUNS), max_size=2)).map(
        lambda vn: [vn[0], *vn[1]]
    )


def _spell(words: list[str], camel: bool) -> str:
    if camel:
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "_".join(words)


@st.composite
def compound_tool_names(draw: st.DrawFn) -> str:
    """A tool name of read actions joined by and/then with at least one effect among them
    (``lookup_then_charge_card``, ``getTokenAndRotate``, ``get_next_job``)."""
    actions = draw(st.lists(_action(_READS), min_size=0, max_size=2))
    effect = draw(st.sampled_from(_EFFECTS))
    at = draw(st.integers(0, len(actions)))
    if draw(st.booleans()):
        actions.insert(at, [effect, *draw(st.lists(st.sampled_from(_NOUNS), max_size=2))])
    else:  # the effect word inside a read action ("get_next_job")
        actions.insert(at, [draw(st.sampled_from(_READS)), effect, draw(st.sampled_from(_NOUNS))])
    words: list[str] = []
    for i, action in enumerate(actions):
        if i:
            words.append(draw(st.sampled_from(_JOINS)))
        words += action
    return _spell(words, draw(st.booleans()))


@st.composite
def read_only_tool_names(draw: st.DrawFn) -> str:
    """A tool name whose every action is a read verb (``list_and_read_files``)."""
    actions = draw(st.lists(_action(_READS), min_size=1, max_size=3))
    words: list[str] = []
    for i, action in enumerate(actions):
        if i:
            words.append(draw(st.sampled_from(_JOINS)))
        words += action
    return _spell(words, draw(st.booleans()))


def openai_sdk_history() -> list[Any]:
    """An OpenAI chat history whose first call is a ``ChatCompletionMessage`` as the SDK
    returns it (tool call ``c1`` of ``t``, a large result), then two turns of dicts."""
    from openai.types.chat import ChatCompletionMessage

    msg = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "t", "arguments": '{"q":1}'}}
            ],
        }
    )
    return [
        {"role": "user", "content": "go"},
        msg,
        {"role": "tool", "tool_call_id": "c1", "content": big()},
        *render("openai_chat", script("t", "t"))[1:],
    ]


_CACHE_MARKS = st.sampled_from([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}])


@st.composite
def cached_anthropic_histories(draw: st.DrawFn) -> list[Any]:
    """A random Anthropic history with ``cache_control`` breakpoints on some blocks: message
    content blocks, tool_result blocks and the blocks of a result's content."""

    def mark(block: Any) -> Any:
        if not isinstance(block, dict) or draw(st.integers(0, 3)) != 0:
            return block
        return {**block, "cache_control": draw(_CACHE_MARKS)}

    out = []
    for message in _anthropic(draw(turns(max_turns=8))):
        content = message["content"]
        if isinstance(content, list):
            content = [mark(b) for b in content]
            for i, block in enumerate(content):
                inner = block.get("content")
                if block["type"] == "tool_result" and isinstance(inner, list):
                    content[i] = {**block, "content": [mark(b) for b in inner]}
        out.append({**message, "content": content})
    return out


@st.composite
def doubled_id_turns(draw: st.DrawFn) -> tuple[list[Turn], str]:
    """Random turns in which one turn calls two tools under one id, and that id."""
    out = draw(turns(max_turns=8))
    calls = (
        Call("twin", draw(st.sampled_from(TOOLS)), draw(_args), draw(results)),
        Call("twin", draw(st.sampled_from(TOOLS)), draw(_args), draw(results)),
    )
    at = draw(st.integers(0, len(out)))
    out.insert(at, Turn(calls, user="task" if at == 0 else None))
    return out, "twin"

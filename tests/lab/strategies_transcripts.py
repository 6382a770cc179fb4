"""Transcript files in every format slimtools reads, rendered from neutral histories.

Each renderer turns the :class:`~tests.clearing.strategies_clearing.Turn` lists of
``strategies_clearing`` into the bytes of one file as its recorder (or API client) would
write it, so that one random history can be loaded, cleared and restored in every format.
:func:`files` draws a format, a history and a spelling of the JSON (indentation, escaped
or raw UTF-8, line endings, a byte-order mark) at random.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import messages_to_dict

from tests.clearing.strategies_clearing import Call, Res, Turn, render, turns


class Style:
    """How a file spells its JSON: indentation, escaping, line endings, byte-order mark."""

    def __init__(self, indent: int | None, ascii: bool, crlf: bool, bom: bool) -> None:
        self.indent, self.ascii, self.crlf, self.bom = indent, ascii, crlf, bom

    def document(self, value: Any) -> bytes:
        text = json.dumps(value, indent=self.indent, ensure_ascii=self.ascii)
        return self._bytes(text.replace("\n", "\r\n") if self.crlf else text)

    def lines(self, values: list[Any]) -> bytes:
        end = "\r\n" if self.crlf else "\n"
        text = "".join(json.dumps(v, ensure_ascii=self.ascii) + end for v in values)
        return self._bytes(text)

    def _bytes(self, text: str) -> bytes:
        return (("\ufeff" if self.bom else "") + text).encode("utf-8", "surrogatepass")

    def __repr__(self) -> str:
        return f"Style(indent={self.indent}, ascii={self.ascii}, crlf={self.crlf}, bom={self.bom})"


styles = st.builds(
    Style, st.sampled_from([None, 1, 2]), st.booleans(), st.booleans(), st.booleans()
)


def _text(res: Res) -> str:
    if isinstance(res.content, str):
        return res.content
    return "\n".join(v for k, v in res.content if k == "text")


def _calls(turns_: list[Turn]) -> list[tuple[int, Call]]:
    return [(i, c) for i, t in enumerate(turns_) for c in t.calls]


# -- the API formats as files ----------------------------------------------------------------


def chat_list(t: list[Turn], s: Style) -> bytes:
    return s.document(render("openai_chat", t))


def chat_body(t: list[Turn], s: Style) -> bytes:
    return s.document({"model": "gpt-4o", "messages": render("openai_chat", t), "tools": []})


def chat_jsonl(t: list[Turn], s: Style) -> bytes:
    return s.lines(render("openai_chat", t))


def responses_body(t: list[Turn], s: Style) -> bytes:
    body = {"model": "gpt-5", "instructions": "Be brief.", "input": render("openai_responses", t)}
    return s.document(body)


def anthropic_body(t: list[Turn], s: Style) -> bytes:
    body = {"model": "claude", "max_tokens": 64, "system": "Be brief."}
    return s.document({**body, "messages": render("anthropic", t)})


def langchain_dump(t: list[Turn], s: Style) -> bytes:
    return s.document(messages_to_dict(render("langchain", t)))


# -- recorders -----------------------------------------------------------------------------


def claude_code(t: list[Turn], s: Style) -> bytes:
    """One line per content block of a response (same message.id), a progress line per call."""
    lines: list[dict[str, Any]] = [{"type": "file-history-snapshot", "messageId": "m"}]
    for n, message in enumerate(render("anthropic", t)):
        base = {"sessionId": "s1", "uuid": f"u{n}", "isSidechain": False, "type": message["role"]}
        content = message["content"]
        if message["role"] == "assistant" and isinstance(content, list):
            for block in content or [{"type": "text", "text": ""}]:
                inner = {"id": f"msg_{n}", "role": "assistant", "content": [block]}
                lines.append({**base, "message": inner})
                if block.get("type") == "tool_use":
                    lines.append({"type": "progress", "uuid": f"p{n}", "toolUseID": block["id"]})
        else:
            lines.append({**base, "message": {"role": message["role"], "content": content}})
    return s.lines(lines)


def tau_bench(t: list[Turn], s: Style) -> bytes:
    """Two runs: the history, and the same history without its first turn."""
    runs = [render("openai_chat", t), render("openai_chat", t[1:])]
    return s.document([{"task_id": i, "trial": 0, "traj": traj} for i, traj in enumerate(runs)])


def swe_agent(t: list[Turn], s: Style) -> bytes:
    """Function calling: ``tool_call_ids`` lists and content as text parts."""
    history: list[dict[str, Any]] = []
    for m in render("openai_chat", t):
        if m["role"] == "tool":
            content = m["content"]
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            history.append({"role": "tool", "content": parts, "tool_call_ids": [m["tool_call_id"]]})
        else:
            history.append({**m, "content": m.get("content") or "", "agent": "main"})
    return s.document({"environment": "swe_main", "trajectory": [], "history": history})


def _text_actions(t: list[Turn]) -> list[tuple[str, str, str | None]]:
    """(role, text, command) steps of a text-action run: one call per assistant message."""
    steps: list[tuple[str, str, str | None]] = [("user", "Fix the bug.", None)]
    for _, c in _calls(t):
        steps.append(("assistant", f"Running {c.tool}.", f"{c.tool} --q {c.id}"))
        steps.append(("user", _text(c.result) if c.result else "", None))
    return steps


def swe_agent_text(t: list[Turn], s: Style) -> bytes:
    history = [
        {"role": role, "content": text, **({"thought": text, "action": cmd} if cmd else {})}
        for role, text, cmd in _text_actions(t)
    ]
    return s.document({"history": history, "info": {}})


def mini_swe_agent(t: list[Turn], s: Style) -> bytes:
    messages = [
        {"role": role, "content": f"THOUGHT: {text}\n\n```bash\n{cmd}\n```" if cmd else text}
        for role, text, cmd in _text_actions(t)
    ]
    return s.document({"trajectory_format": "mini-swe-agent-1", "messages": messages})


def openhands_events(t: list[Turn], s: Style) -> bytes:
    """Function calling: each call carries the model response that asked for it."""
    events: list[dict[str, Any]] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Fix it."}}
    ]
    for turn_index, turn in enumerate(t):
        calls = [c for c in turn.calls if c.result is not None]
        response = {
            "id": f"resp{turn_index}",
            "choices": [
                {
                    "message": {
                        "content": turn.text,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "function": {"name": c.tool, "arguments": json.dumps(c.args)},
                            }
                            for c in calls
                        ],
                    }
                }
            ],
        }
        for c in calls:
            meta = {"function_name": c.tool, "tool_call_id": c.id, "model_response": response}
            events.append(
                {"id": len(events), "source": "agent", "action": "run", "args": {"command": c.tool},
                 "tool_call_metadata": meta}
            )  # fmt: skip
        for c in calls:
            cause = next(
                e["id"]
                for e in events
                if e.get("tool_call_metadata", {}).get("tool_call_id") == c.id
            )
            meta = {"function_name": c.tool, "tool_call_id": c.id}
            events.append(
                {"id": len(events), "source": "agent", "cause": cause, "observation": "run",
                 "content": _text(c.result) if c.result else "", "tool_call_metadata": meta}
            )  # fmt: skip
    events.append(
        {"id": len(events), "source": "agent", "action": "finish", "args": {"thought": "ok"}}
    )
    return s.document(events)


def openhands_output(t: list[Turn], s: Style) -> bytes:
    """Evaluation output: two runs, one a line; old events with ids and causes, no metadata."""
    runs = []
    for k, sub in enumerate((t, t[1:])):
        history: list[dict[str, Any]] = [{"id": 0, "action": "message", "args": {"content": "Go."}}]
        for _, c in _calls(sub):
            history.append({"id": len(history), "action": "run", "args": {"command": c.id}})
            text = _text(c.result) if c.result else ""
            history.append(
                {
                    "id": len(history),
                    "cause": len(history) - 1,
                    "observation": "run",
                    "content": text,
                }
            )
        runs.append({"instance_id": f"task-{k}", "history": history})
    return s.lines(runs)


RENDERERS: dict[str, tuple[str, str, Callable[[list[Turn], Style], bytes]]] = {
    "openai_chat list": ("openai_chat", ".json", chat_list),
    "openai_chat body": ("openai_chat", ".json", chat_body),
    "openai_chat jsonl": ("openai_chat", ".jsonl", chat_jsonl),
    "openai_responses body": ("openai_responses", ".json", responses_body),
    "anthropic body": ("anthropic", ".json", anthropic_body),
    "langchain dump": ("langchain", ".json", langchain_dump),
    "claude_code": ("claude_code", ".jsonl", claude_code),
    "tau_bench": ("tau_bench", ".json", tau_bench),
    "swe_agent": ("swe_agent", ".traj", swe_agent),
    "swe_agent text actions": ("swe_agent", ".traj", swe_agent_text),
    "mini_swe_agent": ("mini_swe_agent", ".json", mini_swe_agent),
    "openhands events": ("openhands", ".json", openhands_events),
    "openhands output": ("openhands", ".jsonl", openhands_output),
}
"""Each file layout: (the source it loads as, a file suffix, the renderer)."""


def _joined(parts: tuple[list[Turn], ...]) -> list[Turn]:
    """The parts one after the other, call ids made unique by their part's number."""
    out: list[Turn] = []
    for n, part in enumerate(parts):
        for turn in part:
            calls = tuple(replace(c, id=f"p{n}_{c.id}") for c in turn.calls)
            orphans = tuple((f"p{n}_{cid}", res) for cid, res in turn.orphans)
            out.append(replace(turn, calls=calls, orphans=orphans))
    return out


histories = st.tuples(turns(), turns(), turns()).map(_joined).filter(bool)
"""Random neutral histories, three times as long as ``turns()`` draws them, so that most
have results old enough to clear."""


# -- mini-swe-agent runs with the harness's own messages ---------------------------------------

MINI_FORMAT_ERROR = (
    "Please always provide EXACTLY ONE action in triple backticks, found {n} actions.\n\n"
    "Please format your action in triple backticks as shown in <response_example>."
)
MINI_SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def _mini_reply(step: int, blocks: int) -> str:
    fences = "\n\n".join(f"```bash\nls step{step}_{b}\n```" for b in range(blocks))
    return f"THOUGHT: step {step}.\n\n{fences}".strip()


@st.composite
def mini_swe_agent_runs(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    """A mini-swe-agent trajectory with format errors and perhaps a submission, and how
    many commands ran and were answered to the model (what must count as results)."""
    blocks = draw(st.lists(st.sampled_from([1, 1, 1, 0, 2, 3]), max_size=12))
    submitted = draw(st.booleans())
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the bug."},
    ]
    for step, n in enumerate(blocks):
        messages.append({"role": "assistant", "content": _mini_reply(step, n)})
        answer = f"<returncode>0</returncode>\n<output>{step}</output>"
        messages.append({"role": "user", "content": answer if n == 1 else MINI_FORMAT_ERROR})
    info: dict[str, Any] = {}
    if submitted:
        messages.append({"role": "assistant", "content": f"Done.\n\n```bash\n{MINI_SUBMIT}\n```"})
        messages.append({"role": "user", "content": "diff --git a/x.py b/x.py\n+fixed"})
        info["exit_status"] = "Submitted"
    doc = {"trajectory_format": "mini-swe-agent-1", "info": info, "messages": messages}
    return doc, blocks.count(1)

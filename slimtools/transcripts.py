"""Load recorded agent transcripts as model histories that slimtools can clear and measure.

Four recorders are understood, each turned into a history in a format the clearing core
reads natively:

- **Claude Code** session JSONL -> Anthropic Messages. One model response is logged as
  several lines sharing ``message.id`` (one per content block), sometimes with the result
  of an early tool call logged between them; the lines are merged back into one assistant
  message and every ``tool_result`` answering it goes into the user message right after
  it, as the API requires. Progress, system, snapshot and sidechain (subagent) lines are
  not part of the main model's context and are dropped.
- **tau-bench** trajectory lists -> OpenAI Chat Completions, one history per run (the file
  holds many runs). ``tool_calls: null`` keys are dropped; nothing else changes.
- **SWE-agent** ``.traj`` with function calling -> OpenAI Chat Completions
  (``tool_call_ids`` becomes ``tool_call_id``; SWE-agent's bookkeeping keys are dropped).
- **Text-action** trajectories (SWE-agent text actions, mini-swe-agent) are *not* tool-call
  formats: the model writes its command in prose and the harness answers with a user
  message. They are converted into **synthetic** tool calls so that clearing can be
  measured on them: each assistant action becomes one OpenAI ``tool_calls`` entry
  (``arguments`` ``{"command": <action>}``, id ``call_<n>``; the assistant ``content`` keeps
  the model's reasoning without the command), and the user message that follows it becomes
  the ``role: "tool"`` result. The tool is named ``bash`` for mini-swe-agent (its only
  tool) and, for SWE-agent, the command's first word when it is one of SWE-agent's own
  commands (``open``, ``edit``, ``find_file``, ...) and ``bash`` otherwise, as SWE-agent's
  own function-calling mode names them. :attr:`Transcript.synthetic` flags these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Message = dict[str, Any]
Source = Literal["claude_code", "tau_bench", "swe_agent", "mini_swe_agent"]

# SWE-agent's own (ACI) commands: a text action starting with one of these is a call of that
# tool; anything else is a shell command, i.e. a call of ``bash``.
_SWE_AGENT_COMMANDS = frozenset(
    (
        *("open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append"),
        *("search_dir", "search_file", "find_file", "submit", "filemap", "str_replace_editor"),
        *("set_cursors", "decompile", "disassemble", "exit_forfeit"),
        *("debug_start", "debug_add_breakpoint", "debug_continue", "debug_step", "debug_exec"),
        *("debug_stop", "connect_start", "connect_sendline", "connect_exec", "connect_stop"),
    )
)
_BASH_BLOCK = re.compile(r"```(?:bash|sh)?[ \t]*\n(.*?)\n?```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Transcript:
    """One recorded run as a model history.

    Attributes:
        name: a label, the file name (plus ``#<task>-<trial>`` for tau-bench runs).
        source: the recorder the run came from.
        format: the history format (``"anthropic"`` or ``"openai_chat"``).
        messages: the history, oldest first.
        synthetic: True when the tool calls were synthesised from text actions.
    """

    name: str
    source: Source
    format: Literal["anthropic", "openai_chat"]
    messages: list[Message]
    synthetic: bool = False


def load_transcripts(*paths: str | Path) -> list[Transcript]:
    """Load every transcript under ``paths`` (files or folders), recognising each format.

    Folders are walked recursively and files sorted by path. Files that are not
    transcripts (README, unknown JSON) are skipped; a malformed transcript raises
    ``ValueError`` naming the file.
    """
    out: list[Transcript] = []
    for path in _files(paths):
        out.extend(load_file(path))
    return out


def load_file(path: str | Path) -> list[Transcript]:
    """Load one file; returns ``[]`` when it is not a transcript slimtools knows."""
    path = Path(path)
    try:
        if path.suffix == ".jsonl":
            return [load_claude_code(path)]
        if not path.name.endswith((".json", ".traj")):
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, list) and data and isinstance(data[0], dict) and "traj" in data[0]:
            return tau_bench_runs(data, path.name)
        if isinstance(data, dict) and data.get("trajectory_format", "").startswith("mini-swe"):
            return [mini_swe_agent_history(data, path.name)]
        if isinstance(data, dict) and isinstance(data.get("history"), list):
            return [swe_agent_history(data, path.name)]
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a well-formed transcript ({exc!r})") from exc
    return []


def _files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"no such transcript file or folder: {path}")


# -- Claude Code ---------------------------------------------------------------------------


def load_claude_code(path: str | Path) -> Transcript:
    """Load a Claude Code session JSONL as an Anthropic Messages history."""
    path = Path(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return Transcript(path.name, "claude_code", "anthropic", claude_code_messages(lines))


def claude_code_messages(lines: Iterable[dict[str, Any]]) -> list[Message]:
    """Rebuild the Anthropic history of the main agent from Claude Code log lines."""
    entries = [
        line
        for line in lines
        if line.get("type") in ("user", "assistant")
        and not line.get("isSidechain")
        and isinstance(line.get("message"), dict)
    ]
    # Pass 1: every response's blocks, merged by message id, and each tool_use's owner.
    blocks: dict[str, list[Any]] = {}
    owner: dict[str, str] = {}
    for i, line in enumerate(entries):
        if line["type"] == "assistant":
            key = str(line["message"].get("id") or f"line{i}")
            for block in _blocks(line["message"].get("content")):
                blocks.setdefault(key, []).append(block)
                if block.get("type") == "tool_use":
                    owner[str(block.get("id"))] = key
    answers: dict[str, list[Any]] = {}
    for line in entries:
        if line["type"] == "user":
            for block in _blocks(line["message"].get("content")):
                answered = owner.get(str(block.get("tool_use_id")))
                if block.get("type") == "tool_result" and answered is not None:
                    answers.setdefault(answered, []).append(block)
    # Pass 2: emit in order of first appearance; answered results follow their response.
    out: list[Message] = []
    emitted: set[str] = set()
    for i, line in enumerate(entries):
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = str(line["message"].get("id") or f"line{i}")
            if key in emitted:
                continue
            emitted.add(key)
            out.append({"role": "assistant", "content": blocks.get(key, [])})
            if key in answers:
                out.append({"role": "user", "content": answers[key]})
        elif isinstance(content, str):
            out.append({"role": "user", "content": content})
        else:
            rest = [
                b
                for b in _blocks(content)
                if not (b.get("type") == "tool_result" and str(b.get("tool_use_id")) in owner)
            ]
            if rest:
                out.append({"role": "user", "content": rest})
    return out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


# -- tau-bench -----------------------------------------------------------------------------


def tau_bench_runs(runs: list[dict[str, Any]], name: str) -> list[Transcript]:
    """Turn a tau-bench trajectory list into one OpenAI chat history per run."""
    out = []
    for run in runs:
        messages = [
            {k: v for k, v in m.items() if not (k == "tool_calls" and not v)} for m in run["traj"]
        ]
        label = f"{name}#{run.get('task_id', '?')}-{run.get('trial', 0)}"
        out.append(Transcript(label, "tau_bench", "openai_chat", messages))
    return out


# -- SWE-agent and mini-swe-agent ----------------------------------------------------------


def swe_agent_history(data: dict[str, Any], name: str) -> Transcript:
    """Turn a SWE-agent ``.traj`` into an OpenAI chat history (synthetic when text actions)."""
    history: list[dict[str, Any]] = data["history"]
    if any(m.get("tool_calls") for m in history):
        return Transcript(name, "swe_agent", "openai_chat", _swe_function_calls(history))
    actions = [_swe_text_action(m) for m in history]
    roles = [str(m.get("role")) for m in history]
    messages = _synthesise(roles, actions, _swe_tool_name)
    return Transcript(name, "swe_agent", "openai_chat", messages, synthetic=True)


def _swe_function_calls(history: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    for m in history:
        role = m.get("role")
        if role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            out.append({"role": "tool", "tool_call_id": ids[0], "content": _text(m["content"])})
        elif role == "assistant" and m.get("tool_calls"):
            calls = [
                {"id": c["id"], "type": "function", "function": dict(c["function"])}
                for c in m["tool_calls"]
            ]
            out.append(
                {"role": "assistant", "content": _text(m.get("content")), "tool_calls": calls}
            )
        else:
            out.append({"role": str(role), "content": _text(m.get("content"))})
    return out


def _swe_text_action(message: dict[str, Any]) -> tuple[str, str | None]:
    """(text to keep, action or None): the reasoning stays as content, the action is a call."""
    action = message.get("action")
    if message.get("role") != "assistant" or not isinstance(action, str) or not action.strip():
        return _text(message.get("content")), None
    return _text(message.get("thought", message.get("content"))).strip(), action.strip()


def _swe_tool_name(action: str) -> str:
    words = action.split(maxsplit=1)
    return words[0] if words and words[0] in _SWE_AGENT_COMMANDS else "bash"


def mini_swe_agent_history(data: dict[str, Any], name: str) -> Transcript:
    """Turn a mini-swe-agent run into an OpenAI chat history with synthetic ``bash`` calls."""
    history: list[dict[str, Any]] = data["messages"]
    actions: list[tuple[str, str | None]] = []
    for m in history:
        text = _text(m.get("content"))
        found = _BASH_BLOCK.search(text) if m.get("role") == "assistant" else None
        if found is None:
            actions.append((text, None))
        else:
            thought = (text[: found.start()] + text[found.end() :]).strip()
            actions.append((thought, found.group(1).strip()))
    roles = [str(m.get("role")) for m in history]
    messages = _synthesise(roles, actions, lambda _action: "bash")
    return Transcript(name, "mini_swe_agent", "openai_chat", messages, synthetic=True)


def _synthesise(
    roles: list[str],
    items: list[tuple[str, str | None]],
    tool_name: Callable[[str], str],
) -> list[Message]:
    """Make each assistant action a tool call and the user message after it its result."""
    out: list[Message] = []
    pending: str | None = None
    for n, (role, (text, action)) in enumerate(zip(roles, items, strict=True)):
        if role == "user" and pending is not None:
            out.append({"role": "tool", "tool_call_id": pending, "content": text})
            pending = None
            continue
        pending = None
        if role == "assistant" and action is not None:
            pending = f"call_{n}"
            call = {
                "id": pending,
                "type": "function",
                "function": {
                    "name": tool_name(action),
                    "arguments": json.dumps({"command": action}, ensure_ascii=False),
                },
            }
            out.append({"role": "assistant", "content": text, "tool_calls": [call]})
        else:
            out.append({"role": role, "content": text})
    return out


def _text(content: Any) -> str:
    """Plain text of a message content: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return "" if content is None else str(content)

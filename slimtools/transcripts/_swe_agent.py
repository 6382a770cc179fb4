"""SWE-agent ``.traj`` files and mini-swe-agent trajectories as OpenAI Chat histories.

A ``.traj`` holds the model's messages under ``history``. With function calling they map
one to one (``tool_call_ids`` becomes ``tool_call_id``; SWE-agent's bookkeeping keys are
dropped). With text actions the assistant's ``action`` becomes a synthetic call named, as
SWE-agent's own function-calling mode names it, after the command's first word when that is
one of SWE-agent's commands (``open``, ``edit``, ``find_file``, ...) and ``bash`` otherwise.
mini-swe-agent acts with one fenced bash block per assistant message: that block becomes a
synthetic ``bash`` call. A reply with several blocks or none ran no command (the harness
answers with a format error), and the message the harness appends when the run ends (the
submission, or why it stopped) reached no model: neither is a call's result, so both stay
plain messages. Only ``history``/``messages`` are read and cleared; a ``.traj``'s
``trajectory`` and ``info`` records are left as they are.
"""

from __future__ import annotations

import re
from typing import Any

from slimtools.transcripts._model import Location, MalformedError, Message, Origin, Run
from slimtools.transcripts._reader import Reader
from slimtools.transcripts._synthetic import Step, synthesise, text_of

# SWE-agent's own (ACI) commands: a text action starting with one of these is a call of that
# tool; anything else is a shell command, i.e. a call of ``bash``.
SWE_AGENT_COMMANDS = frozenset(
    (
        *("open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append"),
        *("search_dir", "search_file", "find_file", "submit", "filemap", "str_replace_editor"),
        *("set_cursors", "decompile", "disassemble", "exit_forfeit"),
        *("debug_start", "debug_add_breakpoint", "debug_continue", "debug_step", "debug_exec"),
        *("debug_stop", "connect_start", "connect_sendline", "connect_exec", "connect_stop"),
    )
)
_BASH_BLOCK = re.compile(r"```(?:bash|sh)?[ \t]*\n(.*?)\n?```", re.DOTALL)
# mini-swe-agent's own action pattern: it runs a reply's command only when this finds one
_MINI_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_FORMAT_ERROR = re.compile(r"\s*Please always provide EXACTLY ONE action", re.IGNORECASE)


def is_mini_swe_agent(doc: dict[str, Any]) -> bool:
    """A mini-swe-agent trajectory (``trajectory_format: "mini-swe-agent-1"``)."""
    kind = doc.get("trajectory_format")
    return isinstance(kind, str) and kind.startswith("mini-swe") and "messages" in doc


def _messages(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = doc.get(key)
    if not isinstance(items, list):
        raise MalformedError(f"expected a '{key}' list of messages")
    for i, m in enumerate(items):
        if not isinstance(m, dict):
            raise MalformedError(f"{key}[{i}] is a {type(m).__name__}, not a message object")
    return items


def is_swe_agent(doc: dict[str, Any]) -> bool:
    """A SWE-agent ``.traj``: a ``history`` list (OpenHands run records, which have one too,
    are recognised first)."""
    return isinstance(doc.get("history"), list)


def swe_agent_run(doc: dict[str, Any], base: Location) -> Run:
    """A SWE-agent ``.traj`` (function calling, or text actions made synthetic)."""
    history = _messages(doc, "history")
    if any(m.get("tool_calls") for m in history):
        return _function_calls(history, base)
    steps = []
    for i, m in enumerate(history):
        at = base.child("history", i)
        text, action = _text_action(m)
        steps.append(Step(str(m.get("role")), text, action, at, at.child("content")))
    messages, origins = synthesise(steps, _tool_name)
    return Run(messages, origins, "openai_chat", synthetic=True)


def _function_calls(history: list[dict[str, Any]], base: Location) -> Run:
    messages: list[Message] = []
    origins: list[Origin] = []
    for i, m in enumerate(history):
        role = m.get("role")
        at = base.child("history", i)
        if role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            if not isinstance(ids, list) or not ids or not isinstance(ids[0], str):
                raise MalformedError(f"history[{i}] is a tool message without a tool_call_id")
            messages.append(
                {"role": "tool", "tool_call_id": ids[0], "content": text_of(m.get("content"))}
            )
            origins.append(Origin(at, {0: at.child("content")}))
            continue
        if role == "assistant" and m.get("tool_calls"):
            calls = []
            for j, c in enumerate(m["tool_calls"]):
                if not isinstance(c, dict) or not isinstance(c.get("function"), dict):
                    raise MalformedError(f"history[{i}].tool_calls[{j}] has no function")
                if not isinstance(c.get("id"), str):
                    raise MalformedError(f"history[{i}].tool_calls[{j}] has no id")
                calls.append({"id": c["id"], "type": "function", "function": dict(c["function"])})
            content = text_of(m.get("content"))
            messages.append({"role": "assistant", "content": content, "tool_calls": calls})
        else:
            messages.append({"role": str(role), "content": text_of(m.get("content"))})
        origins.append(Origin(at))
    return Run(messages, tuple(origins), "openai_chat")


def _text_action(message: dict[str, Any]) -> tuple[str, str | None]:
    """(text to keep, action or None): the reasoning stays as content, the action is a call."""
    action = message.get("action")
    if message.get("role") != "assistant" or not isinstance(action, str) or not action.strip():
        return text_of(message.get("content")), None
    return text_of(message.get("thought", message.get("content"))).strip(), action.strip()


def _tool_name(action: str) -> str:
    words = action.split(maxsplit=1)
    return words[0] if words and words[0] in SWE_AGENT_COMMANDS else "bash"


def mini_swe_agent_run(doc: dict[str, Any], base: Location) -> Run:
    """A mini-swe-agent trajectory with synthetic ``bash`` calls, one per command that ran."""
    messages = _messages(doc, "messages")
    ending = _exit_message(doc, messages)
    steps = []
    for i, m in enumerate(messages):
        at = base.child("messages", i)
        text = text_of(m.get("content"))
        command = None
        if m.get("role") == "assistant" and i + 1 != ending and not _refused(messages, i):
            command = _mini_command(text)
        if command is None:
            steps.append(Step(str(m.get("role")), text, None, at, at.child("content")))
        else:
            found, action = command
            thought = (text[: found.start()] + text[found.end() :]).strip()
            steps.append(Step("assistant", thought, action, at, at.child("content")))
    messages_, origins = synthesise(steps, lambda _action: "bash")
    return Run(messages_, origins, "openai_chat", synthetic=True)


def _mini_command(text: str) -> tuple[re.Match[str], str] | None:
    """The reply's one command, as mini-swe-agent finds it; None for zero or several."""
    found = list(_MINI_ACTION.finditer(text))
    if len(found) == 1:
        return found[0], found[0].group(1).strip()
    if found:
        return None
    loose = _BASH_BLOCK.search(text)  # an older spelling (``sh``, no language) of one block
    return (loose, loose.group(1).strip()) if loose is not None else None


def _refused(messages: list[dict[str, Any]], i: int) -> bool:
    """Whether the harness answered message ``i`` with a format error (no command ran)."""
    if i + 1 >= len(messages) or messages[i + 1].get("role") != "user":
        return False
    return _FORMAT_ERROR.match(text_of(messages[i + 1].get("content"))) is not None


def _exit_message(doc: dict[str, Any], messages: list[dict[str, Any]]) -> int | None:
    """The index of the harness's closing message, which answers the last reply to no model.

    A run that ended (``info.exit_status`` set: submitted, or a limit reached) closes with a
    user message carrying the submission or the reason; the reply before it is then no call.
    """
    info = doc.get("info")
    status = info.get("exit_status") if isinstance(info, dict) else None
    last = len(messages) - 1
    if not isinstance(status, str) or not status or last < 1:
        return None
    if messages[last].get("role") != "user" or messages[last - 1].get("role") != "assistant":
        return None
    return last


SWE_AGENT = Reader(
    "swe_agent",
    "swe_agent",
    "runs",
    read_run=lambda doc, base, _forced: swe_agent_run(doc, base),
    is_run=is_swe_agent,
)
"""A SWE-agent ``.traj`` (or a list or JSON Lines of them)."""

MINI_SWE_AGENT = Reader(
    "mini_swe_agent",
    "mini_swe_agent",
    "runs",
    read_run=lambda doc, base, _forced: mini_swe_agent_run(doc, base),
    is_run=is_mini_swe_agent,
)
"""A mini-swe-agent trajectory (or a list or JSON Lines of them)."""

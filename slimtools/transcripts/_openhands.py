"""OpenHands event streams as OpenAI Chat histories.

An OpenHands run is a list of events: actions (``"action": "run"``, ``"run_ipython"``,
``"edit"``, ``"message"``, ``"finish"``, ...) and observations (``"observation": ...``),
each answering the action whose ``id`` is its ``cause``. Files hold either one run as a JSON
list of events, or one run per JSON line with its events under ``history`` (resolver and
evaluation output). The history is rebuilt as OpenHands' own ``ConversationMemory`` builds
the model's prompt:

- An action with ``tool_call_metadata`` was a real tool call. Its assistant message is the
  model response recorded there (text and every tool call, with real names and ids such as
  ``execute_bash``, ``str_replace_editor`` or ``execute_ipython_cell``), emitted once every
  call of that response has its observation, followed by those observations as tool
  messages. A response whose calls never all got an answer is left out, as OpenHands does.
- A tool action without metadata (older streams) becomes a synthetic call named after the
  action (``run``, ``run_ipython``, ``edit``, ``read``, ...; an MCP call after its tool),
  with the action's own fields as arguments and its thought as the assistant text. The
  observation whose ``cause`` is the action's ``id`` answers it, or in streams without ids
  the next observation. Such transcripts are flagged ``synthetic``.
- ``message`` actions are user or assistant messages by ``source`` (in streams without
  ``source`` the first message is the user's task and later ones the agent's); ``system``
  is the system prompt; ``finish`` is the agent's closing message.
- Bookkeeping (agent state changes, recalls, condensation requests, null events) is not in
  the prompt and is dropped; an observation that answers no call is a user message.

A result's text is the observation's ``content``: what the model saw, less the short
suffixes OpenHands appends (exit code, working directory). An edit observation's ``extras``
(old and new file contents) are not sent to the model and are neither read nor cleared.
"""

from __future__ import annotations

from typing import Any

from slimtools.transcripts._model import Location, MalformedError, Message, Origin, Run
from slimtools.transcripts._reader import Reader, unzip
from slimtools.transcripts._synthetic import call, text_of

TOOL_ACTIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive"}
    | {"delegate", "think", "call_tool_mcp", "task_tracking"}
)
DROPPED = frozenset(
    {"change_agent_state", "agent_state_changed", "null", "recall", "condensation"}
    | {"condensation_request", "reject"}
)
# Event fields that are not a tool's arguments (old streams keep arguments at the top level).
_NOT_ARGUMENTS = frozenset(
    {"id", "timestamp", "source", "message", "action", "args", "tool_call_metadata", "cause"}
    | {"llm_metrics", "timeout", "thought", "is_confirmed", "confirmation_state", "hidden"}
    | {"security_risk", "action_risk", "keep_prompt", "kernel_init_code", "blocking"}
    | {"images_urls", "image_urls", "wait_for_response"}
)


def is_event(value: Any) -> bool:
    """One OpenHands event: an action or an observation (SWE-agent messages, which carry an
    ``action`` too, have a ``role``; events never do)."""
    return (
        isinstance(value, dict)
        and "role" not in value
        and (isinstance(value.get("action"), str) or isinstance(value.get("observation"), str))
    )


def is_openhands_run(doc: dict[str, Any]) -> bool:
    """A run record whose ``history`` is an OpenHands event stream."""
    history = doc.get("history")
    return isinstance(history, list) and any(is_event(e) for e in history[:5])


def openhands_record_run(doc: dict[str, Any], base: Location) -> Run:
    """A run record (``{"instance_id"?, "history": [events], ...}``)."""
    history = doc.get("history")
    if not isinstance(history, list):
        raise MalformedError("an OpenHands run record needs a 'history' list of events")
    run = openhands_run(history, [base.child("history", i) for i in range(len(history))])
    instance = doc.get("instance_id")
    return run._replace(label=f"#{instance}") if isinstance(instance, (str, int)) else run


def openhands_run(events: list[Any], ats: list[Location]) -> Run:
    """An event list as an OpenAI Chat history; ``ats`` says where each event is."""
    builder = _Builder()
    for i, (event, at) in enumerate(zip(events, ats, strict=True)):
        builder.add(i, event, at)
    return Run(builder.messages, tuple(builder.origins), "openai_chat", builder.synthetic)


class _Builder:
    """Turns events into messages in order, holding real calls until they are answered."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.origins: list[Origin] = []
        self.synthetic = False
        # model response id -> (assistant message, its origin, the call ids it waits for)
        self.pending: dict[str, tuple[Message, Origin, list[str]]] = {}
        self.answered: dict[str, tuple[Message, Origin]] = {}
        self.by_event: dict[Any, str] = {}  # action id -> synthetic call id
        self.open_call: str | None = None  # the last synthetic call still unanswered
        self.spoke = False  # whether a message action was seen (streams without source)

    def emit(self, message: Message, origin: Origin) -> None:
        self.messages.append(message)
        self.origins.append(origin)

    def add(self, index: int, event: Any, at: Location) -> None:
        if not is_event(event):
            raise MalformedError(f"event {index} is neither an action nor an observation")
        if isinstance(event.get("action"), str):
            self.action(index, event, at)
        else:
            self.observation(event, at)
        self.flush()

    def action(self, index: int, event: dict[str, Any], at: Location) -> None:
        kind = event["action"]
        args = event["args"] if isinstance(event.get("args"), dict) else event
        meta = event.get("tool_call_metadata")
        source = event.get("source")
        if kind in DROPPED:
            return
        if kind == "message":
            user = source == "user" if source is not None else not self.spoke
            self.spoke = True
            role = "user" if user else "assistant"
            self.emit({"role": role, "content": text_of(args.get("content"))}, Origin(at))
        elif kind == "system":
            self.emit({"role": "system", "content": text_of(args.get("content"))}, Origin(at))
        elif kind == "finish":
            text = args.get("final_thought") or args.get("thought") or event.get("message")
            role = "user" if source == "user" else "assistant"
            self.emit({"role": role, "content": text_of(text)}, Origin(at))
        elif kind == "run" and source == "user" and not isinstance(meta, dict):
            text = f"User executed the command:\n{text_of(args.get('command'))}"
            self.emit({"role": "user", "content": text}, Origin(at))
        elif isinstance(meta, dict):
            self.real_call(index, meta, args, at)
        elif kind in TOOL_ACTIONS:
            self.synthetic_call(index, event, kind, args, at)

    def real_call(
        self, index: int, meta: dict[str, Any], args: dict[str, Any], at: Location
    ) -> None:
        call_id, name = meta.get("tool_call_id"), meta.get("function_name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise MalformedError(f"event {index}: tool_call_metadata without tool_call_id or name")
        response = meta.get("model_response")
        key = response.get("id") if isinstance(response, dict) else None
        key = key if isinstance(key, str) and key else f"call:{call_id}"
        if key in self.pending:  # another call of a response already seen
            return
        message = _response_message(response)
        if message is None:  # metadata without the response: the call as recorded
            message = {
                "role": "assistant",
                "content": text_of(args.get("thought")),
                "tool_calls": [],
            }
        calls = message["tool_calls"]
        if call_id not in {c["id"] for c in calls}:
            arguments = {k: v for k, v in args.items() if k not in _NOT_ARGUMENTS}
            calls.append(call(call_id, name, arguments))
        self.pending[key] = (message, Origin(at), [c["id"] for c in calls])

    def synthetic_call(
        self, index: int, event: dict[str, Any], kind: str, args: dict[str, Any], at: Location
    ) -> None:
        event_id = event.get("id")
        call_id = f"call_{event_id if event_id is not None else index}"
        name = args.get("name") if kind == "call_tool_mcp" else kind
        arguments = {k: v for k, v in args.items() if k not in _NOT_ARGUMENTS}
        entry = call(call_id, name if isinstance(name, str) and name else kind, arguments)
        message = {
            "role": "assistant",
            "content": text_of(args.get("thought")),
            "tool_calls": [entry],
        }
        self.emit(message, Origin(at))
        if event_id is not None:
            self.by_event[event_id] = call_id
        self.open_call = call_id
        self.synthetic = True

    def observation(self, event: dict[str, Any], at: Location) -> None:
        if event["observation"] in DROPPED:
            return
        text = text_of(event.get("content"))
        results = {0: at.child("content")} if "content" in event else {}
        meta = event.get("tool_call_metadata")
        if isinstance(meta, dict) and isinstance(meta.get("tool_call_id"), str):
            call_id = meta["tool_call_id"]
            message = {"role": "tool", "tool_call_id": call_id, "content": text}
            self.answered[call_id] = (message, Origin(at, results))
            return
        cause = event.get("cause")
        found = self.by_event.pop(cause, None) if cause is not None else self.open_call
        if found is None:
            self.emit({"role": "user", "content": text}, Origin(at))
            return
        if found == self.open_call:
            self.open_call = None
        self.emit({"role": "tool", "tool_call_id": found, "content": text}, Origin(at, results))

    def flush(self) -> None:
        """Emit each pending response whose calls are all answered, then its answers."""
        for key, (message, origin, ids) in list(self.pending.items()):
            if all(i in self.answered for i in ids):
                self.emit(message, origin)
                for i in ids:
                    self.emit(*self.answered.pop(i))
                del self.pending[key]


def _response_message(response: Any) -> Message | None:
    """The assistant message of a recorded model response, with its tool calls."""
    try:
        message = response["choices"][0]["message"]
        entries = message.get("tool_calls") or []
    except (TypeError, KeyError, IndexError, AttributeError):
        return None
    calls = []
    for entry in entries:
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(function, dict) and isinstance(entry.get("id"), str):
            calls.append(
                {
                    "id": entry["id"],
                    "type": "function",
                    "function": {
                        "name": function.get("name"),
                        "arguments": function.get("arguments") or "{}",
                    },
                }
            )
    return {"role": "assistant", "content": text_of(message.get("content")), "tool_calls": calls}


OPENHANDS = Reader(
    "openhands",
    "openhands",
    "either",
    read_run=lambda doc, base, _forced: openhands_record_run(doc, base),
    read_messages=lambda entries, _forced: openhands_run(*unzip(entries)),
    is_run=is_openhands_run,
    is_entry=is_event,
)
"""An OpenHands event stream, or run records (``{"history": [events]}``) holding one."""

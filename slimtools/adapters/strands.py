"""Strands Agents adapter: slim every tool's result in a hook, clear the history before each call.

``Agent(model, tools=[..., record_tool(kit)], hooks=[SlimHook(fields=..., key=...),
ClearingHook()])``. :class:`SlimHook` replaces each result on ``AfterToolCallEvent`` (its
``result`` is writable) by what ``wrap()`` would have shown of that tool: options for every
tool, per tool (``tools=``), or both; a result that cannot be projected under ``fields`` or
``deny`` is withheld with a note. The model reads the envelope as the result's one text
block. A Strands tool keeps its own schema, so a long result is summarised rather than paged
(see :mod:`slimtools.foreign.hooks`); ``get_record`` reaches the rest.

:class:`ClearingHook` clears what each model call is sent. ``BeforeModelCallEvent`` carries
no messages to edit, so by default it adds an ``InvokeModelStage.Input`` middleware, which
edits Strands' per-call copy of the messages (ephemeral: ``agent.messages`` keeps the
originals); with ``persist=True`` it rewrites stale ``toolResult`` blocks in
``agent.messages`` on ``BeforeModelCallEvent`` instead. Each block keeps its ``toolUseId``
and place, so Strands' pairing (and the parallel calls of one turn, answered in one user
message) is untouched. One clearer is kept per agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

try:
    from strands.hooks import (
        AfterToolCallEvent,
        AgentInitializedEvent,
        BeforeModelCallEvent,
        HookProvider,
    )
    from strands.middleware import InvokeModelStage
    from strands.tools.tools import PythonAgentTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.strands needs Strands Agents: pip install 'slimtools[strands]'"
    ) from exc

from slimtools._json import dumps_str, to_jsonable
from slimtools.adapters._clearing import Conversations
from slimtools.foreign import DEFAULT_MAX_TOKENS, Raw, Screen
from slimtools.foreign.hooks import ResultSlimmer
from slimtools.toolkit import Toolkit, default_toolkit

if TYPE_CHECKING:
    from strands.hooks import HookRegistry
    from strands.middleware.stages import InvokeModelContext

    from slimtools.clearing import ClearingPolicy
    from slimtools.clearing.audit import Audit

__all__ = ["ClearingHook", "SlimHook", "record_tool"]


class SlimHook(HookProvider):
    """Slims every tool's result as it is made, as ``slimtools.wrap`` would slim that tool.

    Args:
        tools: per-tool option tables by tool name, each merged over ``options``.
        toolkit: where handles are kept and ``get_record`` reads (default:
            ``slimtools.default_toolkit``); give the agent ``record_tool(toolkit)``.
        max_tokens: the budget of a tool with no options (``None``: such results pass).
        **options: ``wrap()``'s options for every tool (``fields``, ``deny``, ``key``...).
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        toolkit: Toolkit | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        **options: Any,
    ) -> None:
        self.slimmer = ResultSlimmer(
            toolkit, tools=tools, max_tokens=max_tokens, screen_native=_screened, **options
        )

    @property
    def toolkit(self) -> Toolkit:
        """The toolkit keeping this hook's handles."""
        return self.slimmer.toolkit

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Subscribe to ``AfterToolCallEvent``."""
        registry.add_callback(AfterToolCallEvent, self.after_tool_call)

    async def after_tool_call(self, event: AfterToolCallEvent[Any]) -> None:
        """Replace ``event.result`` by what the model should read of it."""
        result = event.result
        name = str(event.tool_use.get("name") or "")
        call_id = str(result.get("toolUseId") or "") or None
        slimmed = await self.slimmer.aslim(name, _raw(result), call_id=call_id)
        if slimmed is None:
            return
        content = slimmed.native if slimmed.passed else [{"text": slimmed.text}]
        status = "error" if slimmed.is_error else result.get("status", "success")
        replaced: Any = {"toolUseId": result["toolUseId"], "status": status, "content": content}
        event.result = replaced


class ClearingHook(HookProvider):
    """Clears stale tool results from what the model is sent before each model call.

    Args:
        policy: what to clear and when (defaults: turn-end clearing, 2 turns kept).
        persist: False (default): ephemeral, the model sees the cleared history (through an
            ``InvokeModelStage.Input`` middleware, on Strands' own copy of the messages) and
            ``agent.messages`` keeps the originals. True: the placeholders are written into
            ``agent.messages`` on ``BeforeModelCallEvent`` (the history, and a session manager
            that saves it later, hold them; an ``audit=`` sink keeps the originals).
        audit: a sink receiving each original before it is replaced.
        max_agents: clearers kept, one per agent (least recently used go first).
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        persist: bool = False,
        audit: Audit | None = None,
        max_agents: int = 1024,
    ) -> None:
        self.persist = persist
        self.conversations = Conversations(policy, audit=audit, max_conversations=max_agents)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Persisted: subscribe to ``BeforeModelCallEvent``; ephemeral: add the middleware
        once the agent exists."""
        if self.persist:
            registry.add_callback(BeforeModelCallEvent, self.before_model_call)
        else:
            registry.add_callback(AgentInitializedEvent, self._add_middleware)

    def before_model_call(self, event: BeforeModelCallEvent) -> None:
        """Persisted use: write placeholders over the stale results of ``agent.messages``."""
        self._clear(event.agent, event.agent.messages)

    def model_input(self, context: InvokeModelContext) -> InvokeModelContext:
        """Ephemeral use: clear the copy of the messages this model call is sent."""
        self._clear(context.agent, context.messages)
        return context

    def _add_middleware(self, event: AgentInitializedEvent) -> None:
        event.agent.add_middleware(InvokeModelStage.Input, self.model_input)

    def _clear(self, agent: Any, history: list[Any]) -> None:
        """Replace, in ``history``, each message holding a stale result by a cleared copy."""
        key = f"{agent.agent_id}:{id(agent)}"
        for edit in self.conversations.edits(key, [_message(m) for m in history]):
            message = history[edit.message]
            blocks = list(message.get("content") or ())
            blocks[edit.block] = _edited(blocks[edit.block], edit.text, edit.args)
            history[edit.message] = {**message, "content": blocks}


def record_tool(kit: Toolkit | None = None) -> PythonAgentTool:
    """``kit``'s ``get_record`` (default: ``slimtools.default_toolkit``'s) as a Strands tool.

    Its arguments go through ``kit.acall``, so a bad call comes back as an error result the
    model can act on, never as an exception out of the run.
    """
    kit = kit or default_toolkit
    spec = kit.spec(kit.companion_name)

    async def run(tool_use: Mapping[str, Any], **_: Any) -> dict[str, Any]:
        result = await kit.acall(
            spec.name, tool_use.get("input") or {}, call_id=tool_use.get("toolUseId")
        )
        return {
            "toolUseId": tool_use["toolUseId"],
            "status": "error" if result.is_error else "success",
            "content": [{"text": result.text}],
        }

    tool_spec: Any = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": {"json": spec.parameters},
    }
    return PythonAgentTool(spec.name, tool_spec, cast(Any, run))


# -- results ------------------------------------------------------------------------------

_MEDIA = ("image", "document", "video")


def _raw(result: Mapping[str, Any]) -> Raw:
    """A Strands tool result in neutral form: text blocks, one JSON block, or media."""
    blocks = list(result.get("content") or ())
    texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
    data = [b["json"] for b in blocks if "json" in b]
    opaque = any(key in b for b in blocks for key in _MEDIA)
    structured = None
    if len(data) == 1 and not texts:
        structured = to_jsonable(data[0])
    elif data:  # JSON beside text, or several JSON blocks: read each as text
        texts += [dumps_str(to_jsonable(d)) for d in data]
    return Raw(
        texts=texts,
        structured=structured,
        is_error=result.get("status") == "error",
        opaque=opaque,
        native=blocks,
    )


def _screened(native: list[dict[str, Any]], screen: Screen) -> list[dict[str, Any]]:
    """A passed-through result's blocks with ``screen`` applied; media blocks kept."""
    out: list[dict[str, Any]] = []
    for block in native:
        if isinstance(block.get("text"), str):
            out.append({"text": screen.text(block["text"])})
        elif "json" in block:
            out.append({"json": screen.data(to_jsonable(block["json"]))})
        elif any(key in block for key in _MEDIA):
            out.append(block)
    return out


# -- clearing -----------------------------------------------------------------------------


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One Strands message as an Anthropic message, block for block."""
    return {
        "role": message.get("role"),
        "content": [_block(b) for b in message.get("content") or ()],
    }


def _block(block: Mapping[str, Any]) -> dict[str, Any]:
    use, result = block.get("toolUse"), block.get("toolResult")
    if use is not None:
        return {
            "type": "tool_use",
            "id": use.get("toolUseId"),
            "name": use.get("name"),
            "input": use.get("input") or {},
        }
    if result is not None:
        content = [_block(b) for b in result.get("content") or ()]
        return {
            "type": "tool_result",
            "tool_use_id": result.get("toolUseId"),
            "content": content,
            "is_error": result.get("status") == "error",
        }
    if isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if "json" in block:
        return {"type": "text", "text": dumps_str(to_jsonable(block["json"]))}
    if any(key in block for key in _MEDIA):
        return {"type": "image"}
    return {"type": "other"}


def _edited(block: Any, text: str | None, args: dict[str, Any] | None) -> Any:
    """A copy of ``block`` holding a placeholder result or shortened arguments."""
    if text is not None and "toolResult" in block:
        return {**block, "toolResult": {**block["toolResult"], "content": [{"text": text}]}}
    if args is not None and "toolUse" in block:
        return {**block, "toolUse": {**block["toolUse"], "input": args}}
    return block

"""Google ADK adapter: slim every tool's result in a plugin, clear the history before each call.

``Runner(agent=agent, plugins=[SlimPlugin(fields=..., key=...), ClearingPlugin()])`` with
``record_tool(kit)`` among the agent's tools. :class:`SlimPlugin` replaces each result in
``after_tool_callback`` (a returned dict replaces the result, ADK's contract) by what
``wrap()`` would have shown of that tool: options for every tool, per tool (``tools=``), or
both; a result that cannot be projected under ``fields`` or ``deny`` is withheld with a note.
The envelope goes to the model as the function response itself (``{total, briefs, hint}``),
not as JSON text inside it. An ADK tool keeps its own schema, so a long result is summarised
rather than paged (see :mod:`slimtools.foreign.hooks`); ``get_record`` reaches the rest.
Handles are kept per ADK user (the session bound with ``slimtools.session``, if any, wins).

:class:`ClearingPlugin` clears in ``before_model_callback`` by editing the request's
contents: ADK builds them per request as copies of the session's events, so the model sees
the cleared history and the session keeps the originals (ephemeral clearing). Each
function response keeps its id and name, so ADK's call/response pairing (and the
parallel calls of one model turn, answered in one content) is untouched. One clearer is
kept per session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

try:
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.tools.base_tool import BaseTool
    from google.genai import types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.google_adk needs Google ADK: pip install 'slimtools[google-adk]'"
    ) from exc

from slimtools._json import dumps_str, loads, to_jsonable
from slimtools._session import current_session
from slimtools.adapters._clearing import Conversations
from slimtools.foreign import DEFAULT_MAX_TOKENS, Raw, Screen
from slimtools.foreign.hooks import ResultSlimmer, Slimmed
from slimtools.toolkit import Toolkit, default_toolkit

if TYPE_CHECKING:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools.tool_context import ToolContext

    from slimtools.clearing import ClearingPolicy
    from slimtools.clearing.audit import Audit

__all__ = ["ClearingPlugin", "SlimPlugin", "record_tool"]


class SlimPlugin(BasePlugin):
    """Slims every tool's result as it is made, as ``slimtools.wrap`` would slim that tool.

    Args:
        tools: per-tool option tables by tool name, each merged over ``options``.
        toolkit: where handles are kept and ``get_record`` reads (default:
            ``slimtools.default_toolkit``); give the agent ``record_tool(toolkit)``.
        max_tokens: the budget of a tool with no options (``None``: such results pass).
        name: the plugin's name, unique among a runner's plugins.
        **options: ``wrap()``'s options for every tool (``fields``, ``deny``, ``key``...).
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        toolkit: Toolkit | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        name: str = "slimtools",
        **options: Any,
    ) -> None:
        super().__init__(name=name)
        self.slimmer = ResultSlimmer(
            toolkit, tools=tools, max_tokens=max_tokens, screen_native=_screened, **options
        )

    @property
    def toolkit(self) -> Toolkit:
        """The toolkit keeping this plugin's handles."""
        return self.slimmer.toolkit

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """The slimmed result as the function response (None: the result as it is)."""
        slimmed = await self.slimmer.aslim(
            tool.name,
            _raw(result),
            call_id=tool_context.function_call_id,
            session=_session(tool_context),
        )
        return None if slimmed is None else _response(slimmed)


class ClearingPlugin(BasePlugin):
    """Clears stale tool results from each model request (the session keeps them).

    Args:
        policy: what to clear and when (defaults: turn-end clearing, 2 turns kept).
        audit: a sink receiving each original before it is replaced.
        max_sessions: clearers kept, one per session (least recently used go first).
        name: the plugin's name, unique among a runner's plugins.
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        audit: Audit | None = None,
        max_sessions: int = 1024,
        name: str = "slimtools_clearing",
    ) -> None:
        super().__init__(name=name)
        self.conversations = Conversations(policy, audit=audit, max_conversations=max_sessions)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Edit ``llm_request.contents`` in place; never answers instead of the model."""
        contents = llm_request.contents
        messages = [_message(c) for c in contents]
        _pair_ids(messages)
        key = f"{callback_context.session.id}:{callback_context.agent_name}"
        for edit in self.conversations.edits(key, messages):
            content = contents[edit.message]
            parts = list(content.parts or ())
            parts[edit.block] = _edited(parts[edit.block], edit.text, edit.args)
            # Part objects are replaced, never mutated: ADK shares their payloads with the
            # session's events, which keep the originals.
            contents[edit.message] = content.model_copy(update={"parts": parts})
        return None


def record_tool(kit: Toolkit | None = None) -> BaseTool:
    """``kit``'s ``get_record`` (default: ``slimtools.default_toolkit``'s) as an ADK tool.

    Its arguments go through ``kit.acall``, so a bad call comes back as an error result
    the model can act on (``{"error": ...}``), never as an exception out of the run.
    """
    return _RecordTool(kit or default_toolkit)


class _RecordTool(BaseTool):
    """The toolkit's record tool, declared with its JSON schema."""

    def __init__(self, kit: Toolkit) -> None:
        spec = kit.spec(kit.companion_name)
        super().__init__(name=spec.name, description=spec.description)
        self._kit = kit
        self._schema = spec.parameters

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        result = await self._kit.acall(
            self.name, args, call_id=tool_context.function_call_id, session=_session(tool_context)
        )
        if result.is_error:
            return {"error": result.text}
        try:  # a record is sent as data, as ADK sends every result
            return {"result": loads(result.text)}
        except ValueError:
            return {"result": result.text}


def _session(context: ToolContext) -> str:
    """The handle session of a call: the one bound with ``slimtools.session``, else the ADK
    user's id, so one user's handles are never read by another's ``get_record``."""
    return current_session() or str(context.user_id)


# -- results ------------------------------------------------------------------------------


def _is_media(value: Any) -> bool:
    return isinstance(value, (types.Part, types.FunctionResponsePart, types.Blob))


def _raw(result: Any) -> Raw:
    """An ADK tool's return value in neutral form (ADK's ``{"error": ...}`` is an error)."""
    is_error = isinstance(result, dict) and result.get("error") is not None
    if isinstance(result, str):
        return Raw(texts=[result], native=result)
    opaque = _is_media(result) or any(_is_media(v) for v in _values(result))
    plain = _without_media(result) if opaque else result
    return Raw(
        texts=[],
        structured=to_jsonable(plain),
        is_error=is_error,
        opaque=opaque,
        native=result,
    )


def _values(result: Any) -> list[Any]:
    if isinstance(result, dict):
        return list(result.values())
    return list(result) if isinstance(result, (list, tuple)) else []


def _without_media(result: Any) -> Any:
    """``result`` without its top-level media (what a screen reads)."""
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if not _is_media(v)}
    if isinstance(result, (list, tuple)):
        return [v for v in result if not _is_media(v)]
    return None


def _screened(native: Any, screen: Screen) -> Any:
    """A passed-through result with ``screen`` applied, its top-level media kept as is."""
    screened = screen.data(to_jsonable(_without_media(native)))
    if isinstance(native, dict):
        media = {k: v for k, v in native.items() if _is_media(v)}
        return {**(screened if isinstance(screened, dict) else {"result": screened}), **media}
    if isinstance(native, (list, tuple)):
        return [*(screened if isinstance(screened, list) else []), *filter(_is_media, native)]
    return native if _is_media(native) else screened


def _response(slimmed: Slimmed) -> dict[str, Any]:
    """The function response ADK sends: the envelope itself, or the screened result."""
    if slimmed.passed:
        native = slimmed.native
        return native if isinstance(native, dict) else {"result": native}
    if slimmed.structured is not None:
        return slimmed.structured
    return {"error": slimmed.text} if slimmed.is_error else {"result": slimmed.text}


# -- clearing -----------------------------------------------------------------------------


def _message(content: types.Content) -> dict[str, Any]:
    """One content as an Anthropic message, part for block (ids paired by :func:`_pair_ids`)."""
    role = "assistant" if content.role == "model" else "user"
    return {"role": role, "content": [_block(p) for p in content.parts or ()]}


def _block(part: types.Part) -> dict[str, Any]:
    call, response = part.function_call, part.function_response
    if call is not None:
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args or {}}
    if response is not None:
        body = response.response or {}
        text = dumps_str(to_jsonable(body))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        blocks += [{"type": "image"} for _ in response.parts or ()]
        return {
            "type": "tool_result",
            "tool_use_id": response.id,
            "name": response.name,
            "content": blocks if response.parts else text,
            "is_error": isinstance(body, dict) and body.get("error") is not None,
        }
    if part.text is not None:
        return {"type": "text", "text": part.text}
    if part.inline_data is not None or part.file_data is not None:
        return {"type": "image"}
    return {"type": "other"}


def _pair_ids(messages: list[dict[str, Any]]) -> None:
    """Give calls and responses without an id one, pairing them by name in order (a model
    that sends no ids answers each name's calls in the order they were made)."""
    calls: dict[str | None, int] = {}
    responses: dict[str | None, int] = {}
    for message in messages:
        for block in message["content"]:
            kind = block["type"]
            if kind == "tool_use" and not block["id"]:
                n = calls[block["name"]] = calls.get(block["name"], 0) + 1
                block["id"] = f"{block['name']}#{n}"
            elif kind == "tool_result" and not block["tool_use_id"]:
                n = responses[block["name"]] = responses.get(block["name"], 0) + 1
                block["tool_use_id"] = f"{block['name']}#{n}"


def _edited(part: types.Part, text: str | None, args: dict[str, Any] | None) -> types.Part:
    """A copy of ``part`` holding a placeholder result or shortened arguments."""
    if text is not None and part.function_response is not None:
        response = part.function_response.model_copy(
            update={"response": {"result": text}, "parts": None}
        )
        return part.model_copy(update={"function_response": response})
    if args is not None and part.function_call is not None:
        call = part.function_call.model_copy(update={"args": args})
        return part.model_copy(update={"function_call": call})
    return part

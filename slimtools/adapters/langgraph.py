"""Clear stale tool results inside LangGraph graphs and LangChain v1 agents.

Two surfaces over the same incremental :class:`~slimtools.clearing.Clearer`:

- :class:`ClearingNode`, for a hand-built ``StateGraph``: ``builder.add_node("clear",
  ClearingNode(policy))`` between the tools node and the agent node.
  It returns only the replaced messages; they keep their ``id``, so LangGraph's
  ``add_messages`` reducer overwrites them in place and the call/result pairing is never
  touched. This is *persisted* clearing: the stored state holds the placeholders (and so
  does every checkpoint). For *ephemeral* clearing in such a graph, call
  ``node.cleared(state["messages"])`` inside the agent node and give that to the model.
- :class:`ClearingMiddleware`, for ``langchain.agents.create_agent``. By default it is
  ephemeral (``wrap_model_call``): the model sees the cleared history, the agent state stays
  byte-identical. With ``persist=True`` it clears in ``before_model`` and writes the
  placeholders into the state instead.

Which to choose: ephemeral keeps the full originals in state (recoverable, but the state
and its checkpoints keep growing); persisted keeps state and checkpoints small (use an
``audit=`` sink if the originals matter). Both are monotone and cache-friendly: the
clearer remembers what it cleared, so the cleared prefix only moves when the policy says.

One clearer is kept per LangGraph thread (``configurable.thread_id``), so a node or
middleware shared by many conversations still costs time proportional to the new messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
    from langgraph.config import get_config
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.langgraph needs LangChain and LangGraph: "
        "pip install 'slimtools[langchain]'"
    ) from exc

from slimtools.adapters._clearing import Conversations
from slimtools.clearing import ClearingPolicy
from slimtools.clearing.audit import Audit

__all__ = ["ClearingMiddleware", "ClearingNode", "replaced_messages"]

_DEFAULT_THREAD = "__default__"


def replaced_messages(before: Sequence[Any], after: Sequence[Any]) -> list[Any]:
    """The messages of ``after`` that are not the very objects at the same index of ``before``.

    The clearing core shares unchanged messages and copies the ones it rewrites (same
    ``id``), so identity tells exactly which ones ``add_messages`` must overwrite.
    """
    return [new for old, new in zip(before, after, strict=False) if new is not old]


class _Clearers:
    """One :class:`Clearer` per LangGraph thread, least recently used dropped beyond a bound
    (the adapters' one table of clearers, :class:`~slimtools.adapters._clearing.Conversations`)."""

    def __init__(
        self, policy: ClearingPolicy | None, audit: Audit | None, max_threads: int
    ) -> None:
        if max_threads < 1:
            raise ValueError("max_threads must be at least 1")
        # Each clearer with its own lock: a Clearer is not thread-safe, and calls without a
        # thread id (a batch run without a checkpointer) all share one.
        self._threads = Conversations(
            policy, audit=audit, max_conversations=max_threads, format="langchain"
        )
        self.policy = self._threads.policy

    def clear(self, messages: Sequence[Any]) -> list[Any]:
        """The cleared history; on any failure the history unchanged (logged), so clearing
        can never stop the agent loop; that thread's clearer starts afresh next time."""
        cleared = self._threads.clear(_thread_id(), messages)
        return list(messages) if cleared is None else cleared


def _thread_id() -> str:
    """The current LangGraph thread id, or a shared key outside a graph run."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # called outside a runnable context (e.g. directly in a test)
        return _DEFAULT_THREAD
    thread = configurable.get("thread_id")
    return _DEFAULT_THREAD if thread is None else str(thread)


def _update(before: Sequence[Any], after: Sequence[Any]) -> list[Any]:
    """The ``messages`` update that makes ``add_messages`` turn ``before`` into ``after``."""
    replaced = replaced_messages(before, after)
    if all(getattr(m, "id", None) for m in replaced):
        return replaced
    # A message without an id cannot be overwritten in place (add_messages would append a
    # copy): rebuild the list instead. States built by add_messages always carry ids.
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *after]


class ClearingNode:
    """A LangGraph node that clears stale tool results in the state, in place.

    Example::

        clear = ClearingNode(ClearingPolicy(keep_turns=2))
        builder.add_node("clear", clear)
        builder.add_edge("tools", "clear")
        builder.add_edge("clear", "agent")

    Args:
        policy: what to clear and when (defaults: turn-end clearing, 2 turns kept).
        key: the state key holding the messages (reduced with ``add_messages``).
        audit: a sink receiving each original before it is replaced.
        max_threads: clearers kept for this many threads (least recently used go first).
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        key: str = "messages",
        audit: Audit | None = None,
        max_threads: int = 1024,
    ) -> None:
        self.key = key
        self._clearers = _Clearers(policy, audit, max_threads)

    @property
    def policy(self) -> ClearingPolicy:
        """The clearing policy in use."""
        return self._clearers.policy

    def __call__(self, state: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The state update: only the replaced messages (same ids), or none."""
        messages = list(state.get(self.key) or ())
        return {self.key: _update(messages, self._clearers.clear(messages))}

    def cleared(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Ephemeral use: the cleared history to give the model; the state is not touched."""
        return self._clearers.clear(messages)


class ClearingMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """A ``create_agent`` middleware that clears stale tool results before each model call.

    Example::

        agent = create_agent(model, tools, middleware=[ClearingMiddleware(ClearingPolicy())])

    Args:
        policy: what to clear and when (defaults: turn-end clearing, 2 turns kept).
        persist: False (default): ephemeral, the model sees the cleared history and the
            agent state is left as it was. True: the placeholders are written into the
            state before the model call (same ids, overwritten in place).
        audit: a sink receiving each original before it is replaced.
        max_threads: clearers kept for this many threads (least recently used go first).
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        persist: bool = False,
        audit: Audit | None = None,
        max_threads: int = 1024,
    ) -> None:
        super().__init__()
        self.persist = persist
        self._clearers = _Clearers(policy, audit, max_threads)

    @property
    def policy(self) -> ClearingPolicy:
        """The clearing policy in use."""
        return self._clearers.policy

    def before_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        """Persisted use: the replaced messages as a state update (nothing when ephemeral)."""
        if not self.persist:
            return None
        messages = list(state["messages"])
        update = _update(messages, self._clearers.clear(messages))
        return {"messages": update} if update else None

    async def abefore_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        """Async :meth:`before_model` (clearing is CPU-only and incremental)."""
        return self.before_model(state, runtime)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """Ephemeral use: call the model on the cleared history."""
        return handler(self._edited(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        return await handler(self._edited(request))

    def _edited(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.persist or not request.messages:
            return request
        return request.override(messages=self._clearers.clear(request.messages))

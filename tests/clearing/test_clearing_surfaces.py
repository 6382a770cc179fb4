"""One decision everywhere: every clearing surface sends the model the same request each round.

The cache-aware decision is a function of the history (with the placeholders earlier rounds
wrote) and the policy. So clearing a persisted history in one pass, the incremental
``Clearer`` (ephemeral and persisted), ``ClearingNode`` and ``ClearingMiddleware`` (ephemeral
and persisted) must agree round by round; these tests replay real transcripts through all of
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph.message import add_messages

from benchmarks.peers import to_langchain_messages
from slimtools.adapters.langgraph import ClearingMiddleware, ClearingNode
from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results, view
from slimtools.ledger import round_starts
from slimtools.transcripts import Transcript, load_transcripts
from tests._shared import sample, shared_data

POLICIES = {
    "default": ClearingPolicy(),
    "openai": ClearingPolicy(cache="openai"),
    "window": ClearingPolicy(max_context_tokens=6_000),
    "turn-end": ClearingPolicy(cache=None),
}
Requests = list[list[Any]]


def _sample() -> list[Transcript]:
    """A few runs of every recorder (all of them under the full profile)."""
    return sample(load_transcripts(shared_data() / "transcripts"), key=lambda run: run.source)


def ephemeral(history: Sequence[Any], starts: list[int], clear: Callable[..., Any]) -> Requests:
    """Each round's request when the original history is passed every time."""
    return [list(clear(history[:start])) for start in starts]


def persisted(history: Sequence[Any], starts: list[int], clear: Callable[..., Any]) -> Requests:
    """Each round's request when the cleared history is stored and grown by new messages."""
    stored: list[Any] = []
    out = []
    for start in starts:
        stored = list(clear([*stored, *history[len(stored) : start]]))
        out.append(stored)
    return out


def one_pass(policy: ClearingPolicy, fmt: str) -> Callable[[Sequence[Any]], list[Any]]:
    return lambda messages: clear_stale_results(messages, policy, format=fmt)


@pytest.mark.shared
@pytest.mark.parametrize("label", POLICIES)
def test_dict_surfaces_agree_round_by_round(label):
    """One pass over the persisted history equals the incremental clearer, either way used."""
    policy = POLICIES[label]
    cleared = 0
    for run in _sample():
        history, fmt = run.messages, run.format
        starts = round_starts(history, fmt)
        expected = persisted(history, starts, one_pass(policy, fmt))
        assert ephemeral(history, starts, Clearer(policy, format=fmt).clear) == expected, run.name
        assert persisted(history, starts, Clearer(policy, format=fmt).clear) == expected, run.name
        if expected:
            cleared += sum(r.cleared for r in view(expected[-1], fmt).results)
    assert cleared, "the sample must exercise clearing"


class _Recorder(FakeMessagesListChatModel):
    """A chat model that is never asked: the middleware's handler records the request."""


def _middleware_requests(history: list[BaseMessage], starts: list[int], policy) -> Requests:
    """What ``ClearingMiddleware`` (ephemeral) hands the model each round."""
    from langchain.agents.middleware.types import ModelRequest, ModelResponse

    middleware = ClearingMiddleware(policy)
    seen: Requests = []

    def handler(request: ModelRequest) -> ModelResponse:
        seen.append(list(request.messages))
        return ModelResponse(result=[AIMessage("ok")])

    model = _Recorder(responses=[])
    for start in starts:
        request = ModelRequest(model=model, messages=list(history[:start]))
        middleware.wrap_model_call(request, handler)
    return seen


def _state_requests(history: list[BaseMessage], starts: list[int], step) -> Requests:
    """Each round's request when a state update (``add_messages``) is stored, as graphs do."""
    state: list[BaseMessage] = []
    out = []
    for start in starts:
        state = add_messages(state, list(history[len(state) : start]))
        update = step(state)
        if update:
            state = add_messages(state, update)
        out.append(list(state))
    return out


@pytest.mark.shared
@pytest.mark.parametrize("label", POLICIES)
def test_langgraph_surfaces_agree_round_by_round(label):
    """ClearingNode and ClearingMiddleware, ephemeral and persisted, send the same requests."""
    policy = POLICIES[label]
    cleared = 0
    for run in _sample():
        history = [
            m.model_copy(update={"id": f"m{i}"})
            for i, m in enumerate(to_langchain_messages(run.messages))
        ]
        starts = round_starts(history, "langchain")
        expected = persisted(history, starts, one_pass(policy, "langchain"))
        via_node = _state_requests(history, starts, _node_step(ClearingNode(policy)))
        stored = ClearingMiddleware(policy, persist=True)

        def before_model(state: list[BaseMessage], middleware=stored) -> list[BaseMessage]:
            update = middleware.before_model({"messages": state}, None)
            return update["messages"] if update else []

        if expected:
            cleared += sum(r.cleared for r in view(expected[-1], "langchain").results)
        assert _dumps(via_node) == _dumps(expected), run.name
        assert _dumps(_state_requests(history, starts, before_model)) == _dumps(expected), run.name
        assert _dumps(_middleware_requests(history, starts, policy)) == _dumps(expected), run.name
    assert cleared, "the sample must exercise clearing"


def _node_step(node: ClearingNode) -> Callable[[list[BaseMessage]], list[BaseMessage]]:
    return lambda state: node({"messages": state})["messages"]


def _dumps(requests: Requests) -> list[list[dict[str, Any]]]:
    return [[m.model_dump() for m in request] for request in requests]

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

from benchmarks.peers._common import OBSERVATION_PLACEHOLDER, Step
from benchmarks.peers.langchain import (
    context_editing_step,
    has_langchain,
    langchain_defaults_step,
    to_langchain_messages,
)
from benchmarks.peers.openai_agents import to_agents_input, tool_output_trimmer_step
from benchmarks.peers.swe_agent import last_n_observations_step, observation_masking_step

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


def peer_steps() -> dict[str, Step]:
    """The peer libraries' clearing at their published defaults, by label, for reports.

    LangChain's ``ClearToolUsesEdit`` is not here: it replays on LangChain messages, see
    :func:`langchain_defaults_step`.
    """
    return {
        "swe-agent last 5 observations": last_n_observations_step(5),
        "complexity trap, 10-turn window": observation_masking_step(10),
        "agents sdk ToolOutputTrimmer": tool_output_trimmer_step(),
    }

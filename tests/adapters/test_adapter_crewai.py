"""CrewAI adapter: the after-tool-call hook and get_record tool, in a real crew run offline."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import Toolkit
from slimtools.foreign import Raw
from slimtools.foreign.hooks import ResultSlimmer
from tests._profile import examples

# CrewAI's own switches only: OTEL_SDK_DISABLED would turn off the SDK for every later test.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

crewai = pytest.importorskip("crewai", reason="pip install '.[dev]'")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.hooks import ToolCallHookContext, get_after_tool_call_hooks  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.tools import tool  # noqa: E402

from slimtools.adapters.crewai import CrewSlimming  # noqa: E402

ISSUES = [
    {"number": n, "title": f"issue {n}", "email": f"u{n}@corp.example", "body": "x" * 300}
    for n in range(1, 31)
]
CONFIG = {"fields": ["number", "title"], "key": "number", "deny": ["email"]}


@tool("list_issues")
def list_issues(repo: str) -> str:
    """List a repository's issues (a tool you did not write)."""
    return json.dumps(ISSUES)


def context(name: str, result: str, arguments: dict[str, Any] | None = None) -> Any:
    """An after-tool-call context as CrewAI builds it."""
    return ToolCallHookContext(tool_name=name, tool_input=arguments or {}, tool=list_issues,
                               tool_result=result)  # fmt: skip


def test_configured_result_is_replaced_by_an_envelope() -> None:
    """The hook returns the envelope text; get_record expands a brief by its key."""
    slimming = CrewSlimming(tools={"list_issues": CONFIG})
    replaced = slimming.hook(context("list_issues", json.dumps(ISSUES)))
    assert replaced is not None
    assert orjson.loads(replaced)["briefs"][0] == {"number": 1, "title": "issue 1"}
    record = orjson.loads(slimming.record_tool.run(handle=3))
    assert record["body"] == "x" * 300
    assert "email" not in record


def test_small_unconfigured_result_is_kept_with_none() -> None:
    """None keeps CrewAI's result: a small result of an unconfigured tool."""
    assert CrewSlimming().hook(context("echo", "hello")) is None


def test_unreadable_result_under_an_allowlist_is_withheld() -> None:
    """Free text an allowlist cannot project is withheld with a note."""
    replaced = CrewSlimming(tools={"list_issues": CONFIG}).hook(
        context("list_issues", "write to u1@corp.example")
    )
    assert replaced is not None
    assert "corp.example" not in replaced
    assert "withheld" in replaced


def test_a_failing_slimmer_withholds_a_guarded_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """CrewAI keeps the raw result when a hook raises, so the hook never raises under a guard."""
    slimming = CrewSlimming(tools={"list_issues": CONFIG})

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("store down")

    monkeypatch.setattr(slimming.slimmer, "slim", boom)
    replaced = slimming.hook(context("list_issues", json.dumps(ISSUES)))
    assert replaced is not None
    assert "corp.example" not in replaced
    assert "withheld" in replaced


def test_get_record_tool_results_are_not_slimmed_again() -> None:
    """The record tool's own output passes (it is already paged)."""
    slimming = CrewSlimming(**CONFIG, max_tokens=1)
    assert slimming.hook(context("get_record", "y" * 5000)) is None


def test_registered_adds_and_removes_the_global_hook() -> None:
    """registered() holds the hook for the with block only."""
    slimming = CrewSlimming()
    with slimming.registered():
        assert slimming.hook in get_after_tool_call_hooks()
    assert slimming.hook not in get_after_tool_call_hooks()


def test_a_given_toolkit_keeps_the_handles_its_get_record_reads() -> None:
    """toolkit= (e.g. on a shared store) holds the handles; record_tool reads them."""
    kit = Toolkit("mine")
    slimming = CrewSlimming(tools={"list_issues": CONFIG}, toolkit=kit)
    slimming.hook(context("list_issues", json.dumps(ISSUES)))
    record = orjson.loads(kit.call(kit.companion_name, {"handle": 3}).text)
    assert record["title"] == "issue 3"
    assert orjson.loads(slimming.record_tool.run(handle=3)) == record


def test_options_are_keyword_arguments_as_for_wrap() -> None:
    """Per-tool tables go in tools=, never positionally."""
    with pytest.raises(TypeError):
        CrewSlimming({"list_issues": CONFIG})  # type: ignore[misc]


class ScriptedLLM(BaseLLM):
    """A ReAct agent: list issues, expand the third brief, answer; notes what it was shown."""

    def __init__(self) -> None:
        super().__init__(model="scripted")
        self.seen: list[str] = []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        said = "\n".join(m["content"] for m in messages if m["role"] == "assistant")
        self.seen = re.findall(r"Observation: (.*)", said)
        if not self.seen:
            return 'Thought: list\nAction: list_issues\nAction Input: {"repo": "o/r"}'
        if len(self.seen) == 1:
            number = json.loads(self.seen[0])["briefs"][2]["number"]
            return f'Thought: read\nAction: get_record\nAction Input: {{"handle": {number}}}'
        return "Thought: I now know the final answer\nFinal Answer: done"

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 100_000


@pytest.fixture(scope="module")
def crew_run() -> list[str]:
    """One crew run with the hook registered: what the model saw of each tool call."""
    slimming = CrewSlimming(tools={"list_issues": CONFIG})
    llm = ScriptedLLM()
    agent = Agent(role="triager", goal="triage", backstory="b", llm=llm,
                  tools=[list_issues, slimming.record_tool], verbose=False)  # fmt: skip
    task = Task(description="List the issues.", expected_output="an answer", agent=agent)
    with slimming.registered():
        Crew(agents=[agent], tasks=[task], verbose=False, tracing=False).kickoff()
    return llm.seen


def test_crew_model_sees_the_envelope_not_the_raw_result(crew_run: list[str]) -> None:
    """The agent's model read briefs where the tool returned whole issues."""
    envelope = orjson.loads(crew_run[0])
    assert envelope["total"] == 30
    assert envelope["briefs"][0] == {"number": 1, "title": "issue 1"}


def test_crew_get_record_tool_expands_a_brief(crew_run: list[str]) -> None:
    """The get_record tool the agent called returned the whole record, email denied."""
    record = orjson.loads(crew_run[1])
    assert record["number"] == 3
    assert "email" not in record


def test_crew_no_denied_value_reaches_the_model(crew_run: list[str]) -> None:
    """Nothing the model was shown holds a denied value."""
    assert "corp.example" not in "".join(crew_run)


@settings(max_examples=examples(40), deadline=None)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {"id": st.integers(0, 10**6), "name": st.text(max_size=20),
             "secret": st.text(min_size=1, max_size=12).map(lambda s: f"zz_{s}")}
        ),
        max_size=8,
        unique_by=lambda r: r["id"],
    )
)  # fmt: skip
def test_hook_shows_what_the_shared_slimmer_shows_and_no_denied_value(rows: list[Any]) -> None:
    """The CrewAI hook's text is ResultSlimmer's for the same result, without denied values."""
    options = {"fields": ["id", "name"], "key": "id", "deny": ["secret"]}
    text = json.dumps(rows)
    replaced = CrewSlimming(tools={"find": options}).hook(context("find", text))
    shared = ResultSlimmer(Toolkit("shared"), tools={"find": options}).slim(
        "find", Raw(texts=[text], native=text)
    )
    assert shared is not None
    assert replaced == shared.text
    assert not any(row["secret"] in replaced for row in rows)

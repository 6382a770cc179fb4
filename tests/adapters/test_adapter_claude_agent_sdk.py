"""Claude Agent SDK adapter: the PostToolUse hook, and the SDK's bundled CLI run offline."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import Toolkit
from slimtools.errors import ConfigurationError
from slimtools.foreign import Raw
from slimtools.foreign.hooks import ResultSlimmer
from tests._profile import examples

claude_agent_sdk = pytest.importorskip("claude_agent_sdk", reason="pip install '.[dev]'")

from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    create_sdk_mcp_server,
    query,
    tool,
)

from slimtools.adapters.claude_agent_sdk import ClaudeSlimming  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ISSUES = [
    {"number": n, "title": f"issue {n}", "email": f"u{n}@corp.example", "body": "x" * 300}
    for n in range(1, 31)
]
SEARCH = "mcp__data__list_issues"
CONFIG = {"fields": ["number", "title"], "key": "number", "deny": ["email"]}


def post(tool: str, response: Any, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A PostToolUse hook input as the CLI sends it."""
    return {"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": arguments or {},
            "tool_response": response, "tool_use_id": "toolu_1", "session_id": "s"}  # fmt: skip


def blocks(value: Any) -> list[dict[str, Any]]:
    """An MCP tool's response: one text block of JSON."""
    return [{"type": "text", "text": orjson.dumps(value).decode()}]


def run_hook(slimming: ClaudeSlimming, data: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(slimming.hook(data, data.get("tool_use_id"), {"signal": None}))


def output(answer: dict[str, Any]) -> Any:
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PostToolUse"
    return specific.get("updatedMCPToolOutput", specific.get("updatedToolOutput"))


def test_mcp_result_is_replaced_by_an_envelope_block() -> None:
    """A configured MCP tool's blocks become one text block holding the envelope."""
    answer = run_hook(ClaudeSlimming(tools={SEARCH: CONFIG}), post(SEARCH, blocks(ISSUES)))
    [block] = answer["hookSpecificOutput"]["updatedMCPToolOutput"]
    envelope = orjson.loads(block["text"])
    assert envelope["briefs"][0] == {"number": 1, "title": "issue 1"}
    assert "mcp__slimtools__get_record(1)" in envelope["hint"]


def test_nothing_to_change_returns_an_empty_dict_never_none() -> None:
    """Under on_failure="block" a None blocks the action: a small result gives {}."""
    assert run_hook(ClaudeSlimming(), post(SEARCH, blocks([{"a": 1}]))) == {}


@pytest.mark.parametrize("tool", ["Glob", "TodoWrite", "Edit"])
def test_built_in_tools_of_unknown_output_pass_untouched(tool: str) -> None:
    """Only built-in tools whose output schema is known are rewritten (else the CLI would
    reject the shape and keep the original anyway)."""
    slimming = ClaudeSlimming(**CONFIG, max_tokens=1)
    assert run_hook(slimming, post(tool, {"filenames": ["a"] * 500})) == {}


def test_other_hook_events_are_ignored() -> None:
    """The callback answers {} to any event but PostToolUse."""
    data = {**post(SEARCH, blocks(ISSUES)), "hook_event_name": "PreToolUse"}
    assert run_hook(ClaudeSlimming(tools={SEARCH: CONFIG}), data) == {}


def test_bash_output_keeps_its_schema_with_stdout_slimmed() -> None:
    """Bash's output stays a Bash output; stdout and stderr become the envelope in stdout."""
    stdout = "\n".join(str(n) for n in range(3000))
    response = {"stdout": stdout, "stderr": "warn: slow disk", "interrupted": False,
                "isImage": False}  # fmt: skip
    replaced = output(
        run_hook(ClaudeSlimming(tools={"Bash": {"max_tokens": 200}}), post("Bash", response))
    )
    assert set(replaced) == set(response)
    assert replaced["stderr"] == ""
    assert replaced["interrupted"] is False
    assert orjson.loads(replaced["stdout"])["total"] == 3001


def test_read_output_keeps_its_schema_with_the_content_slimmed() -> None:
    """Read's file.content is replaced; the other fields of its output stay."""
    content = "\n".join(f"row {n}" for n in range(5000))
    file = {"filePath": "/x", "content": content, "numLines": 5000, "startLine": 1,
            "totalLines": 5000}  # fmt: skip
    answer = run_hook(ClaudeSlimming(max_tokens=100), post("Read", {"type": "text", "file": file}))
    replaced = output(answer)
    assert replaced["type"] == "text"
    assert replaced["file"]["filePath"] == "/x"
    assert orjson.loads(replaced["file"]["content"])["total"] == 5000


def test_unreadable_mcp_text_under_an_allowlist_is_withheld() -> None:
    """Free text the allowlist cannot project never reaches the model."""
    response = [{"type": "text", "text": "contact u1@corp.example for access"}]
    [block] = output(run_hook(ClaudeSlimming(tools={SEARCH: CONFIG}), post(SEARCH, response)))
    assert "corp.example" not in block["text"]
    assert "withheld" in block["text"]


def test_image_block_passes_and_its_text_blocks_are_screened() -> None:
    """A result with an image passes through, each text block without the denied paths."""
    response = [*blocks({"number": 1, "title": "t", "email": "u1@corp.example"}),
                {"type": "image", "data": "aGk=", "mimeType": "image/png"}]  # fmt: skip
    replaced = output(
        run_hook(ClaudeSlimming(tools={SEARCH: {"deny": ["email"]}}), post(SEARCH, response))
    )
    assert replaced[1] == response[1]
    assert "corp.example" not in replaced[0]["text"]


def test_record_tool_results_pass_untouched() -> None:
    """get_record's own results are not slimmed again."""
    slimming = ClaudeSlimming(**CONFIG, max_tokens=1)
    assert run_hook(slimming, post(slimming.record_tool, blocks(ISSUES))) == {}


def test_apply_adds_the_hook_first_the_server_and_allows_the_record_tool() -> None:
    """apply keeps the user's hooks and servers and adds slimtools' own."""

    async def mine(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {}

    from claude_agent_sdk import HookMatcher

    base = ClaudeAgentOptions(hooks={"PostToolUse": [HookMatcher(hooks=[mine])]},
                              mcp_servers={}, allowed_tools=["Bash"])  # fmt: skip
    slimming = ClaudeSlimming()
    applied = slimming.apply(base)
    matchers = applied.hooks["PostToolUse"]
    assert matchers[0].hooks == [slimming.hook]
    assert matchers[1].hooks == [mine]
    assert "slimtools" in applied.mcp_servers
    assert applied.allowed_tools == ["Bash", "mcp__slimtools__get_record"]


def test_a_given_toolkit_keeps_the_handles_its_get_record_reads() -> None:
    """toolkit= (e.g. on a shared store) holds the handles the envelopes show."""
    kit = Toolkit("mine", companion_name="mcp__slimtools__get_record")
    slimming = ClaudeSlimming(tools={SEARCH: CONFIG}, toolkit=kit)
    run_hook(slimming, post(SEARCH, blocks(ISSUES)))
    record = orjson.loads(kit.call(kit.companion_name, {"handle": 3}).text)
    assert record["title"] == "issue 3"
    assert "email" not in record


def test_a_toolkit_whose_get_record_the_model_cannot_call_is_refused() -> None:
    """A toolkit's get_record must carry the MCP name the model calls it by."""
    with pytest.raises(ConfigurationError, match="mcp__slimtools__get_record"):
        ClaudeSlimming(toolkit=Toolkit("mine"))


def test_options_are_keyword_arguments_as_for_wrap() -> None:
    """Per-tool tables go in tools=, never positionally."""
    with pytest.raises(TypeError):
        ClaudeSlimming({SEARCH: CONFIG})  # type: ignore[misc]


# ---- the real CLI, offline ---------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One agent run: search (MCP), get_record on the first brief, then Bash; the model's view."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        from _scripted_anthropic import ScriptedModel, offline_env, serving, tool_results
    finally:
        sys.path.remove(str(EXAMPLES))

    @tool("list_issues", "List issues", {"repo": str})
    async def list_issues(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": blocks(ISSUES)}

    def expand(messages: list[Any]) -> tuple[str, dict[str, Any]]:
        envelope = json.loads(tool_results({"messages": messages})[-1])
        return "mcp__slimtools__get_record", {"handle": envelope["briefs"][2]["number"]}

    model = ScriptedModel(SEARCH, [
        lambda m: (SEARCH, {"repo": "o/r"}),
        expand,
        lambda m: ("Bash", {"command": "seq 1 3000", "description": "count"}),
        lambda m: ("Read", {"file_path": str(home / "big.txt")}),
    ])  # fmt: skip
    slimming = ClaudeSlimming(tools={SEARCH: CONFIG, "Bash": {"max_tokens": 150},
                               "Read": {"max_tokens": 150}})  # fmt: skip
    home = tmp_path_factory.mktemp("claude-home")
    (home / "big.txt").write_text("\n".join(f"row {n} of the file" for n in range(1500)))

    async def run() -> None:
        options = slimming.apply(ClaudeAgentOptions(
            mcp_servers={"data": create_sdk_mcp_server("data", tools=[list_issues])},
            allowed_tools=[SEARCH, "Bash", "Read"], env=offline_env(url, str(home)), cwd=str(home),
            setting_sources=[],
        ))  # fmt: skip
        async for _ in query(prompt="List the issues.", options=options):
            pass

    with serving(model) as url:
        asyncio.run(run())
    return model, tool_results(model.requests[-1])


@pytest.mark.subprocess
def test_cli_model_sees_the_envelope_not_the_raw_result(cli_run: Any) -> None:
    """The search result the model received is the envelope of briefs."""
    _, results = cli_run
    envelope = orjson.loads(results[0])
    assert envelope["total"] == 30
    assert envelope["briefs"][0] == {"number": 1, "title": "issue 1"}


@pytest.mark.subprocess
def test_cli_get_record_tool_expands_a_brief(cli_run: Any) -> None:
    """mcp__slimtools__get_record returns the full record behind a handle, email denied."""
    _, results = cli_run
    record = orjson.loads(results[1])
    assert record["number"] == 3
    assert record["body"] == "x" * 300
    assert "email" not in record


@pytest.mark.subprocess
def test_cli_bash_output_is_slimmed_through_updated_tool_output(cli_run: Any) -> None:
    """Bash's long stdout reaches the model as an envelope with a handle."""
    _, results = cli_run
    envelope = orjson.loads(results[2])
    assert envelope["total"] == 3000
    assert "mcp__slimtools__get_record" in envelope["hint"]


@pytest.mark.subprocess
def test_cli_read_output_is_slimmed_through_updated_tool_output(cli_run: Any) -> None:
    """Read's long file reaches the model as an envelope (the CLI numbers it as line 1)."""
    _, results = cli_run
    envelope = orjson.loads(results[3].split("\t", 1)[1])
    assert envelope["total"] == 1500
    assert "row 0 of the file" in envelope["text"]


@pytest.mark.subprocess
def test_cli_no_denied_value_reaches_the_model(cli_run: Any) -> None:
    """No request the CLI sent upstream holds a denied value."""
    model, _ = cli_run
    assert b"corp.example" not in orjson.dumps(model.requests)


ROWS = st.lists(
    st.fixed_dictionaries(
        {"id": st.integers(0, 10**6), "name": st.text(max_size=20),
         "secret": st.text(min_size=1, max_size=12).map(lambda s: f"zz_{s}")}
    ),
    max_size=8,
    unique_by=lambda r: r["id"],
)  # fmt: skip


@settings(max_examples=examples(40), deadline=None)
@given(rows=ROWS)
def test_hook_shows_what_the_shared_slimmer_shows_and_no_denied_value(rows: list[Any]) -> None:
    """The MCP hook's block is ResultSlimmer's text for the same result (one rule, every
    surface), and no denied value is in it."""
    options = {"fields": ["id", "name"], "key": "id", "deny": ["secret"]}
    [block] = output(run_hook(ClaudeSlimming(tools={SEARCH: options}), post(SEARCH, blocks(rows))))
    text = orjson.dumps(rows).decode()
    kit = Toolkit("shared", companion_name="mcp__slimtools__get_record")
    shared = ResultSlimmer(kit, tools={SEARCH: options}).slim(
        SEARCH, Raw(texts=[text], native=text)
    )
    assert shared is not None
    assert block["text"] == shared.text
    assert not any(row["secret"] in block["text"] for row in rows)


def test_parallel_tool_calls_each_get_their_own_envelope() -> None:
    """Hooks running at once (parallel tool calls) never see each other's result."""
    slimming = ClaudeSlimming(tools={SEARCH: CONFIG})

    async def one(n: int) -> Any:
        rows = [{**ISSUES[0], "number": n, "title": f"only {n}"}]
        data = {**post(SEARCH, blocks(rows)), "tool_use_id": f"toolu_{n}"}
        return await slimming.hook(data, data["tool_use_id"], {"signal": None})

    async def run() -> list[Any]:
        return await asyncio.gather(*(one(n) for n in range(20)))

    for n, answer in enumerate(asyncio.run(run())):
        [block] = output(answer)
        assert orjson.loads(block["text"])["briefs"] == [{"number": n, "title": f"only {n}"}]

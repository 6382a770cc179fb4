"""Transcript formats: each recorder's files become paired histories, recognised by content."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slimtools.clearing import view
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.ledger import TokenLedger
from slimtools.transcripts import (
    SOURCES,
    Location,
    Transcript,
    detect_source,
    iter_file,
    load_file,
    load_transcripts,
)
from tests._shared import shared_data

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"

EXPECTED = [
    # file, source, history format, synthetic, runs
    ("openai_chat/list.json", "openai_chat", "openai_chat", False, 1),
    ("openai_chat/body.json", "openai_chat", "openai_chat", False, 1),
    ("openai_chat/messages.jsonl", "openai_chat", "openai_chat", False, 1),
    ("openai_responses/items.json", "openai_responses", "openai_responses", False, 1),
    ("openai_responses/body.json", "openai_responses", "openai_responses", False, 1),
    ("anthropic/messages.json", "anthropic", "anthropic", False, 1),
    ("anthropic/body.json", "anthropic", "anthropic", False, 1),
    ("langchain/dump.json", "langchain", "langchain", False, 1),
    ("langchain/state.json", "langchain", "langchain", False, 1),
    ("claude_code/session.jsonl", "claude_code", "anthropic", False, 1),
    ("swe_agent/function_calling.traj", "swe_agent", "openai_chat", False, 1),
    ("swe_agent/text_actions.traj", "swe_agent", "openai_chat", True, 1),
    ("mini_swe_agent/fix-timeout.traj.json", "mini_swe_agent", "openai_chat", True, 1),
    ("tau_bench/airline.json", "tau_bench", "openai_chat", False, 3),
    ("openhands/events.json", "openhands", "openai_chat", False, 1),
    ("openhands/output.jsonl", "openhands", "openai_chat", True, 2),
]
SUBAGENT = DATA / "claude_code" / "5f0c6a8e-0000-4000-8000-000000000001" / "subagents"


def _one(relative: str) -> Transcript:
    (transcript,) = load_file(DATA / relative)
    return transcript


def _paired(t: Transcript) -> bool:
    """Every result answers a call made earlier in the run; every call is answered but those
    of the last model message (a run may stop right after its final command)."""
    seen = view(t.messages, t.format)
    calls = {c.id: c.position for c in seen.calls}
    answered = {r.call_id for r in seen.results}
    last = max(calls.values(), default=-1)
    return all(r.call_id in calls and calls[r.call_id] < r.position for r in seen.results) and all(
        i in answered for i, at in calls.items() if at != last
    )


@functools.cache
def _parsed(path: Path) -> list:
    """The file's JSON lines (or its one document), parsed independently of the loaders."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".jsonl":
        return [json.loads(line) if line.strip() else None for line in text.splitlines()]
    return [json.loads(text)]


def _value_at(path: Path, location: Location):
    """The JSON value a location points at."""
    node = _parsed(path)[0 if location.line is None else location.line - 1]
    for key in location.path:
        node = node[key]
    return node


def _text(value) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(p["text"] for p in value if isinstance(p, dict) and "text" in p)


@pytest.mark.parametrize(("relative", "source", "fmt", "synthetic", "runs"), EXPECTED)
def test_each_format_is_recognised(relative, source, fmt, synthetic, runs):
    """Each synthetic file loads as its source and history format, every call answered."""
    loaded = load_file(DATA / relative)
    assert len(loaded) == runs
    for t in loaded:
        assert (t.source, t.format, t.synthetic) == (source, fmt, synthetic)
        assert t.path == DATA / relative
        assert len(t.origins) == len(t.messages)
        assert view(t.messages, t.format).results
        assert _paired(t), t.name
    assert detect_source(DATA / relative) == source


def test_sources_cover_every_format():
    """SOURCES names the five recorders and the four history formats."""
    assert set(SOURCES) == {row[1] for row in EXPECTED}
    assert len(SOURCES) == 9


def test_format_comes_from_content_not_the_extension(tmp_path):
    """A session named .log and a tau-bench list named .txt are still recognised."""
    shutil.copy(DATA / "claude_code" / "session.jsonl", tmp_path / "session.log")
    shutil.copy(DATA / "tau_bench" / "airline.json", tmp_path / "runs.txt")
    shutil.copy(DATA / "openai_chat" / "messages.jsonl", tmp_path / "history.json")
    sources = {t.path.name: t.source for t in load_transcripts(tmp_path)}
    assert sources == {
        "session.log": "claude_code",
        "runs.txt": "tau_bench",
        "history.json": "openai_chat",
    }


def test_a_forced_format_overrides_recognition(tmp_path):
    """An old mini-swe-agent file without trajectory_format reads as plain chat unless forced."""
    data = json.loads((DATA / "mini_swe_agent" / "fix-timeout.traj.json").read_text())
    del data["trajectory_format"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    (plain,) = load_file(path)
    (forced,) = load_file(path, format="mini_swe_agent")
    assert (plain.source, plain.synthetic, view(plain.messages).results) == (
        "openai_chat",
        False,
        [],
    )
    assert (forced.source, forced.synthetic) == ("mini_swe_agent", True)
    assert len(view(forced.messages).results) == 6


def test_a_forced_format_that_does_not_fit_is_an_error():
    """Forcing tau_bench on a chat message list says what is missing."""
    with pytest.raises(TranscriptError, match="list element 0: a tau-bench run needs a 'traj'"):
        load_file(DATA / "openai_chat" / "list.json", format="tau_bench")


def test_claude_code_must_be_json_lines():
    """Forcing claude_code on a JSON list is refused: sessions are JSON Lines."""
    with pytest.raises(TranscriptError, match="JSON Lines"):
        load_file(DATA / "openai_chat" / "list.json", format="claude_code")


def test_unknown_format_name_is_refused():
    """A format that is not in SOURCES is a configuration error."""
    with pytest.raises(ConfigurationError, match="unknown transcript format 'chatgpt'"):
        load_file(DATA / "openai_chat" / "list.json", format="chatgpt")


def test_results_are_located_where_their_text_was_read():
    """Every result of every loaded run points at the file value its text came from."""
    files = [DATA / row[0] for row in EXPECTED] + sorted(SUBAGENT.glob("*.jsonl"))
    for path in files:
        for t in load_file(path):
            codec = get_codec(t.format)
            for message, origin in zip(t.messages, t.origins, strict=True):
                for result in safe_decode(codec, message).results:
                    value = _value_at(path, origin.results[result.slot])
                    assert _text(value) == result.text, (path, origin)


def test_shared_transcripts_are_located_too():
    """The same holds for every recorded run in ../shared/data."""
    for t in load_transcripts(shared_data() / "transcripts"):
        codec = get_codec(t.format)
        for message, origin in zip(t.messages, t.origins, strict=True):
            for result in safe_decode(codec, message).results:
                assert _text(_value_at(t.path, origin.results[result.slot])) == result.text


def test_jsonl_messages_remember_their_line():
    """In JSON Lines of messages, message i came from line i + 1."""
    t = _one("openai_chat/messages.jsonl")
    assert [o.at.line for o in t.origins] == list(range(1, len(t.messages) + 1))
    assert t.origins[3].results[0] == Location(4, ("content",))


def test_request_bodies_put_the_system_prompt_first():
    """Anthropic's system and Responses' instructions become a leading system message."""
    anthropic, responses = _one("anthropic/body.json"), _one("openai_responses/body.json")
    assert anthropic.messages[0]["role"] == "system"
    assert anthropic.origins[0].at == Location(None, ("system",))
    assert anthropic.messages[1:] == _one("anthropic/messages.json").messages
    assert responses.messages[0] == {"role": "system", "content": "You are a careful SRE agent."}
    assert responses.messages[1:] == _one("openai_responses/items.json").messages


def test_anthropic_results_are_located_by_block():
    """Two results in one user message point at their own tool_result blocks."""
    t = _one("anthropic/messages.json")
    assert dict(t.origins[2].results) == {
        0: Location(None, (2, "content", 0, "content")),
        1: Location(None, (2, "content", 1, "content")),
    }


def test_langchain_dump_becomes_langchain_messages():
    """With LangChain installed, a dump is read with messages_from_dict."""
    from langchain_core.messages import AIMessage, ToolMessage

    t = _one("langchain/dump.json")
    assert isinstance(t.messages[2], AIMessage)
    assert isinstance(t.messages[3], ToolMessage)
    assert t.origins[3].results[0] == Location(None, (3, "data", "content"))


def test_langchain_dump_without_langchain(monkeypatch):
    """Without LangChain the dict shape is read directly, into chat dicts that bill alike."""
    with_lc = _one("langchain/dump.json")
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)  # import now fails
    without = _one("langchain/dump.json")
    assert (without.source, without.format) == ("langchain", "openai_chat")
    assert without.messages[2]["tool_calls"][0]["function"]["name"] == "search_logs"
    assert without.messages[3] == {
        "role": "tool",
        "tool_call_id": "call_0",
        "content": with_lc.messages[3].content,
    }
    a = TokenLedger.measure(with_lc.messages).summary
    b = TokenLedger.measure(without.messages).summary
    assert (a.rounds, a.resident_end) == (b.rounds, b.resident_end)


@pytest.mark.subprocess
def test_loading_transcripts_imports_no_framework():
    """Loading every non-LangChain format leaves LangChain unimported."""
    probe = (
        "import sys, json\n"
        "from slimtools.transcripts import load_transcripts\n"
        f"load_transcripts({str(DATA / 'openai_chat')!r}, {str(DATA / 'openhands')!r},"
        f" {str(DATA / 'claude_code')!r}, {str(DATA / 'tau_bench')!r})\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert not {"langchain", "langchain_core", "openai", "anthropic"} & set(json.loads(out.stdout))


def test_claude_code_session_regroups_results_after_their_response():
    """A result logged between two tool_use lines of one response follows the whole response."""
    t = _one("claude_code/session.jsonl")
    (i,) = [
        n
        for n, m in enumerate(t.messages)
        if isinstance(m["content"], list) and any(b.get("id") == "toolu_2b" for b in m["content"])
    ]
    uses = [b["id"] for b in t.messages[i]["content"] if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for b in t.messages[i + 1]["content"]]
    assert uses == answered == ["toolu_2", "toolu_2b"]


def test_a_subagent_file_is_the_subagent_history():
    """A file of sidechain lines only is read as the subagent's own history, not as empty."""
    (t,) = load_transcripts(SUBAGENT)  # the .meta.json beside it is not a transcript
    assert t.source == "claude_code"
    assert t.messages[0] == {
        "role": "user",
        "content": "Find where the login timeout is configured.",
    }
    assert [c.name for c in view(t.messages).calls] == ["Grep"] * 5


def test_swe_agent_function_calls_keep_their_ids():
    """tool_call_ids lists become tool_call_id; text parts become text."""
    t = _one("swe_agent/function_calling.traj")
    assert t.messages[3]["tool_call_id"] == "call_0"
    assert t.messages[3]["content"].startswith("r0 line 0")
    assert t.messages[2]["tool_calls"][0]["function"]["name"] == "find_file"


def test_swe_agent_text_actions_name_their_commands():
    """SWE-agent's own commands keep their name; anything else is bash."""
    t = _one("swe_agent/text_actions.traj")
    names = [c.name for c in view(t.messages).calls]
    assert names == ["open", "search_dir", "bash", "goto", "edit", "bash"]
    assert t.messages[2]["content"] == "Next I run `open src/auth.py`."


def test_tau_bench_runs_are_labelled_and_cleaned():
    """Runs are named by task and trial; tool_calls: null keys are dropped."""
    runs = load_file(DATA / "tau_bench" / "airline.json")
    assert [t.name for t in runs] == ["airline.json#0-0", "airline.json#1-0", "airline.json#2-0"]
    assert [t.run for t in runs] == [0, 1, 2]
    assert "tool_calls" not in runs[0].messages[-1]


def test_openhands_calls_keep_real_names_and_ids():
    """Function-calling events: one assistant message per model response, its calls answered."""
    t = _one("openhands/events.json")
    roles = [m["role"] for m in t.messages]
    assert roles[:6] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = t.messages[2]["tool_calls"]
    assert [(c["id"], c["function"]["name"]) for c in calls] == [
        ("toolu_0a", "execute_bash"),
        ("toolu_0b", "str_replace_editor"),
    ]
    assert [m["tool_call_id"] for m in t.messages[3:5]] == ["toolu_0a", "toolu_0b"]
    assert t.messages[2]["content"] == "Looking at step 0."
    assert t.messages[-1] == {"role": "assistant", "content": "Done: the timeout is now 60 s."}


def test_openhands_bookkeeping_events_are_dropped():
    """Recall actions and observations and agent state changes are not in the prompt."""
    t = _one("openhands/events.json")
    texts = [m.get("content") for m in t.messages]
    assert "Added workspace context" not in texts
    assert len(t.messages) == 2 + 5 * 3 + 1


def test_openhands_old_runs_get_synthetic_calls_paired_by_cause():
    """Without metadata each tool action is a synthetic call answered by its cause."""
    first, second = load_file(DATA / "openhands" / "output.jsonl")
    assert [first.name, second.name] == ["output.jsonl#repo__issue-0", "output.jsonl#repo__issue-1"]
    calls = view(first.messages).calls
    assert [(c.id, c.name) for c in calls[:2]] == [("call_1", "run"), ("call_3", "run_ipython")]
    assert calls[0].args == {"command": "cat src/f0.py"}
    assert first.messages[1]["content"] == "Look at f0."
    assert first.messages[2]["tool_call_id"] == "call_1"
    assert first.origins[2].results[0] == Location(1, ("history", 2, "content"))


def test_openhands_stream_without_ids_pairs_by_order():
    """Events without id or cause: each observation answers the action just before it."""
    events = [
        {"action": "message", "content": "Fix it."},
        {"action": "run", "command": "ls", "thought": "List.", "keep_prompt": True},
        {"observation": "run", "content": "a.py", "command": "ls", "exit_code": 0},
        {"action": "message", "content": "Which file?", "wait_for_response": True},
    ]
    (t,) = _load_events(events)
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "assistant"]
    assert t.messages[1]["tool_calls"][0]["function"] == {
        "name": "run",
        "arguments": '{"command": "ls"}',
    }
    assert t.messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "a.py"}


def test_openhands_unanswered_response_is_left_out():
    """A model response whose calls never all got an observation is not in the prompt."""
    meta = {"function_name": "execute_bash", "tool_call_id": "t1", "model_response": {"id": "r1"}}
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Go."}},
        {
            "id": 1,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "tool_call_metadata": meta,
        },
    ]
    (t,) = _load_events(events)
    assert t.messages == [{"role": "user", "content": "Go."}]


def test_openhands_observation_answering_nothing_is_a_user_message():
    """An observation whose cause is no tool action reads as a user message."""
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Go."}},
        {"id": 1, "source": "environment", "cause": 0, "observation": "error", "content": "boom"},
    ]
    (t,) = _load_events(events)
    assert t.messages[1] == {"role": "user", "content": "boom"}


def test_shared_openhands_files():
    """The recorded OpenHands files: one function-calling run, two older synthetic runs."""
    folder = shared_data() / "transcripts" / "openhands"
    (basic,) = load_file(folder / "runtime_trajs_basic.json")
    runs = load_file(folder / "resolver_mock_output.jsonl")
    assert not basic.synthetic
    assert [c.name for c in view(basic.messages).calls] == ["str_replace_editor"]
    assert [len(t.messages) for t in runs] == [8, 44]
    assert all(t.synthetic and _paired(t) for t in runs)
    assert {c.name for t in runs for c in view(t.messages).calls} == {"run", "run_ipython"}


def test_detect_source_reads_only_the_start(tmp_path):
    """A JSONL file recognised from its first line is named even if a later line is broken."""
    path = tmp_path / "s.jsonl"
    lines = (DATA / "claude_code" / "session.jsonl").read_text().splitlines(True)
    path.write_text("".join(lines) + "{broken\n")
    assert detect_source(path) == "claude_code"
    with pytest.raises(TranscriptError):
        list(iter_file(path))


def _load_events(events: list[dict]) -> list[Transcript]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "events.json")
        path.write_text(json.dumps(events))
        return load_file(path)

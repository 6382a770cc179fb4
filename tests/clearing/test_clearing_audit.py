"""Audit sinks and restore."""

from __future__ import annotations

import logging

import pytest

from slimtools.clearing import (
    AuditRecord,
    Clearer,
    ClearingPolicy,
    JsonlAudit,
    MemoryAudit,
    SQLiteAudit,
    clear_stale_results,
    restore,
    view,
)
from slimtools.typing import Audit
from tests.clearing.strategies_clearing import (
    FORMATS,
    Call,
    Res,
    Turn,
    big,
    openai_sdk_history,
    render,
    script,
)

fmt_param = pytest.mark.parametrize("fmt", FORMATS)
FLAT = ClearingPolicy(cache=None, retention={})
INPUTS = FLAT.replace(clear_tool_inputs=True)


@pytest.fixture(params=["memory", "jsonl", "sqlite"])
def audit(request, tmp_path):
    """Each audit sink, fresh."""
    if request.param == "memory":
        yield MemoryAudit()
    elif request.param == "jsonl":
        yield JsonlAudit(tmp_path / "logs" / "audit.jsonl")
    else:
        sink = SQLiteAudit(tmp_path / "audit.db")
        yield sink
        sink.close()


def test_sinks_satisfy_the_protocol(audit):
    """Every sink is an Audit."""
    assert isinstance(audit, Audit)


@fmt_param
def test_restore_of_clear_is_identity(fmt, audit):
    """restore(clear(h)) == h, arguments included, for every sink."""
    history = render(fmt, script("t", ("t", "t"), "t", "t"))
    out = clear_stale_results(history, INPUTS, audit=audit)
    assert out != history
    assert restore(out, audit) == history


@fmt_param
def test_restore_of_block_list_content(fmt, audit):
    """Block-list results come back exactly, through JSON sinks too."""
    parts = (("text", big("a", 150)), ("text", big("b", 150)))
    turns = [Turn((Call("c1", "t", {"q": 1}, Res(parts)),), user="go"), *script("t", "t")[1:]]
    history = render(fmt, turns)
    out = clear_stale_results(history, FLAT.replace(keep_turns=1), audit=audit)
    assert view(out).results[0].cleared
    assert restore(out, audit) == history


def test_records_carry_call_tool_size_turn_and_original(audit):
    """Each record has the call id, tool, size, turn, position and the original content."""
    history = render("openai_chat", script("read_file", "t", "t"))
    clear_stale_results(history, INPUTS, audit=audit)
    result, args = list(audit.read())
    assert isinstance(result, AuditRecord)
    original = history[2]["content"]
    assert (result.kind, result.call_id, result.tool, result.turn, result.position) == (
        "result",
        "call_0",
        "read_file",
        1,
        2,
    )
    assert (result.chars, result.original, result.format) == (
        len(original),
        original,
        "openai_chat",
    )
    assert result.tokens > 0
    assert (args.kind, args.call_id, args.position) == ("input", "call_0", 1)


def test_restore_of_a_grown_history_restores_only_placeholders():
    """Messages appended after clearing, and results never cleared, are left as they are."""
    audit = MemoryAudit()
    history = render("anthropic", script(*["t"] * 4))
    out = clear_stale_results(history, FLAT, audit=audit)
    grown = [*out, {"role": "assistant", "content": "done"}]
    assert restore(grown, audit) == [*history, grown[-1]]


def test_incremental_clearer_audits_each_original_once(tmp_path):
    """A Clearer run over many rounds writes one record per cleared result."""
    audit = JsonlAudit(tmp_path / "a.jsonl")
    history = render("langchain", script(*["t"] * 12))
    clearer = Clearer(FLAT, audit=audit)
    for end in range(1, len(history) + 1):
        out = clearer.clear(history[:end])
    ids = [r.call_id for r in audit.read()]
    assert ids == [f"call_{i}" for i in range(10)]
    assert restore(out, audit) == history


class _Broken:
    def __init__(self) -> None:
        self.fail = True
        self.records: list[AuditRecord] = []

    def write(self, records):
        if self.fail:
            raise OSError("disk full")
        self.records.extend(records)

    def read(self):
        return iter(self.records)


def test_failing_audit_clears_nothing_then_recovers(caplog):
    """When the sink fails nothing is cleared (originals are not lost); later rounds retry."""
    sink = _Broken()
    history = render("openai_chat", script(*["t"] * 4))
    clearer = Clearer(FLAT, audit=sink)
    with caplog.at_level(logging.WARNING, logger="slimtools.clearing"):
        out, report = clearer.clear_with_report(history)
    assert out == history
    assert report.cleared_tool_uses == 0
    assert "audit sink failed" in caplog.text
    sink.fail = False
    out, report = clearer.clear_with_report(history)
    assert report.cleared_tool_uses == 2
    assert restore(out, sink) == history


def test_jsonl_torn_line_is_skipped(tmp_path, caplog):
    """A line cut by a crash is skipped with a warning; the rest is read."""
    path = tmp_path / "a.jsonl"
    audit = JsonlAudit(path)
    clear_stale_results(render("openai_chat", script(*["t"] * 4)), FLAT, audit=audit)
    with path.open("ab") as fh:
        fh.write(b'{"kind": "result", "call_')
    with caplog.at_level(logging.WARNING, logger="slimtools.clearing"):
        assert len(list(audit.read())) == 2
    assert "unreadable audit line" in caplog.text


def test_jsonl_missing_file_reads_empty(tmp_path):
    """Reading an audit that was never written yields nothing."""
    assert list(JsonlAudit(tmp_path / "none.jsonl").read()) == []


def test_sqlite_audit_persists_across_connections(tmp_path):
    """Records written by one SQLiteAudit are read by another on the same file."""
    history = render("openai_responses", script(*["t"] * 4))
    first = SQLiteAudit(tmp_path / "a.db")
    out = clear_stale_results(history, INPUTS, audit=first)
    first.close()
    second = SQLiteAudit(tmp_path / "a.db")
    assert restore(out, second) == history
    second.close()


@pytest.mark.parametrize("audit", ["clearing.jsonl", None])
def test_restore_from_a_path_or_none_names_the_audit_it_needs(audit):
    """``restore(history, "clearing.jsonl")`` says to wrap the path, not "no attribute read"."""
    with pytest.raises(TypeError, match=r"JsonlAudit\(path\)"):
        restore([], audit)  # type: ignore[arg-type]


def test_a_clearer_given_a_path_as_audit_refuses_it_at_once():
    """``Clearer(audit="clearing.jsonl")`` is a TypeError, not a run that never clears."""
    with pytest.raises(TypeError, match=r"JsonlAudit\(path\)"):
        Clearer(FLAT, audit="clearing.jsonl")  # type: ignore[arg-type]


@fmt_param
def test_sinks_restore_a_lone_surrogate_in_a_result_exactly(fmt, audit):
    """A result holding a lone surrogate (what a tool decoding bytes with
    ``surrogateescape`` returns) comes back from every sink exactly, not as U+FFFD."""
    odd = Call("c0", "t", {"q": 1}, Res("name \udcff " + big("ok")))
    history = render(fmt, [Turn((odd,), user="go"), *script("t", "t", "t")])
    out = clear_stale_results(history, FLAT, audit=audit)
    assert view(out).results[0].cleared
    assert restore(out, audit) == history


@pytest.mark.parametrize("fmt", ["langchain", "anthropic"])  # arguments as data, not text
def test_sinks_restore_long_integers_and_surrogates_in_blanked_arguments_exactly(fmt, audit):
    """Blanked arguments holding an integer beyond 64 bits or a lone surrogate come back
    from every sink exactly, not as a float or U+FFFD."""
    args = {"user": 123456789012345678901234567890, "q": "\ud800"}
    odd = Call("c0", "t", args, Res(big("ok")))
    history = render(fmt, [Turn((odd,), user="go"), *script("t", "t", "t")])
    out = clear_stale_results(history, INPUTS, audit=audit)
    assert view(out).calls[0].args == {}
    assert restore(out, audit) == history


def test_file_sinks_restore_sdk_call_entries_as_sdk_objects(audit):
    """Blanked calls of an OpenAI ``ChatCompletionMessage`` come back from every sink as the
    SDK's own tool-call objects, not dicts inside the SDK message."""
    history = openai_sdk_history()
    out = clear_stale_results(history, INPUTS, audit=audit)
    assert out[1].tool_calls[0].function.arguments == "{}"
    back = restore(out, audit)
    assert type(back[1].tool_calls[0]) is type(history[1].tool_calls[0])
    assert back == history


def test_restore_warns_of_placeholders_the_audit_cannot_give_back(tmp_path, caplog):
    """A missing or foreign audit restores nothing, and says so: how many placeholders stay."""
    out = clear_stale_results(render("openai_chat", script(*["t"] * 4)), FLAT, audit=MemoryAudit())
    with caplog.at_level(logging.WARNING, logger="slimtools.clearing"):
        assert restore(out, JsonlAudit(tmp_path / "never-written.jsonl")) == out
    assert "2 cleared results have no original in the audit" in caplog.text


def test_restore_is_silent_when_every_placeholder_comes_back(caplog):
    """A complete audit gives no warning."""
    audit = MemoryAudit()
    out = clear_stale_results(render("openai_chat", script(*["t"] * 4)), FLAT, audit=audit)
    with caplog.at_level(logging.WARNING, logger="slimtools.clearing"):
        restore(out, audit)
    assert "no original" not in caplog.text

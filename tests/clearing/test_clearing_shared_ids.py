"""restore with audits shared by several histories and ids that repeat: it never guesses."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.clearing import (
    AuditRecord,
    ClearingPolicy,
    JsonlAudit,
    MemoryAudit,
    ScopedAudit,
    SQLiteAudit,
    clear_stale_results,
    restore,
    view,
)
from slimtools.typing import Audit
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, big, render, turns

FLAT = ClearingPolicy(cache=None, retention={}, keep_turns=1)
INPUTS = FLAT.replace(clear_tool_inputs=True)


def _conversation(word: str, fmt: str = "anthropic") -> list[Any]:
    """Two turns calling ``call_0`` and ``call_1`` (ids a server reuses in every run)."""
    return render(
        fmt,
        [
            Turn((Call("call_0", "read_file", {"path": f"/{word}"}, Res(big(word))),), user="go"),
            Turn((Call("call_1", "search_logs", {"q": word}, Res(big(word + "s"))),)),
            Turn(),
            Turn(),
        ],
    )


@pytest.fixture(params=["memory", "jsonl", "sqlite"])
def sink(request, tmp_path):
    """Each audit sink, fresh."""
    if request.param == "memory":
        yield MemoryAudit()
    elif request.param == "jsonl":
        yield JsonlAudit(tmp_path / "audit.jsonl")
    else:
        opened = SQLiteAudit(tmp_path / "audit.db")
        yield opened
        opened.close()


def test_restore_leaves_placeholders_two_histories_of_a_shared_sink_both_claim(caplog):
    """Two conversations with the same ids at the same positions share one sink: restore
    cannot tell whose original is whose, so it leaves the placeholders and says why."""
    shared = MemoryAudit()
    a, b = _conversation("alpha"), _conversation("beta")
    out_a = clear_stale_results(a, FLAT, audit=shared)
    clear_stale_results(b, FLAT, audit=shared)
    with caplog.at_level(logging.WARNING, logger="slimtools.clearing"):
        assert restore(out_a, shared) == out_a
    assert "ScopedAudit" in caplog.text


def test_restore_never_puts_another_historys_original_in(caplog):
    """The second history's restore does not get the first history's originals."""
    shared = MemoryAudit()
    a, b = _conversation("alpha"), _conversation("beta")
    clear_stale_results(a, FLAT, audit=shared)
    out_b = clear_stale_results(b, FLAT, audit=shared)
    restored = restore(out_b, shared)
    assert "alpha" not in orjson.dumps(restored).decode()


def test_scoped_audits_on_one_sink_restore_each_history_exactly(sink):
    """ScopedAudit(sink, conversation id) per history: each restores exactly its own."""
    a, b = _conversation("alpha"), _conversation("beta")
    out_a = clear_stale_results(a, INPUTS, audit=ScopedAudit(sink, "conv-a"))
    out_b = clear_stale_results(b, INPUTS, audit=ScopedAudit(sink, "conv-b"))
    assert out_a != a
    assert out_b != b
    assert restore(out_a, ScopedAudit(sink, "conv-a")) == a
    assert restore(out_b, ScopedAudit(sink, "conv-b")) == b


def test_a_scoped_audit_reads_only_its_own_records():
    """read() yields the records written through the same scope, with that scope."""
    shared = MemoryAudit()
    clear_stale_results(_conversation("alpha"), FLAT, audit=ScopedAudit(shared, "a"))
    clear_stale_results(_conversation("beta"), FLAT, audit=ScopedAudit(shared, "b"))
    mine = list(ScopedAudit(shared, "a").read())
    assert mine
    assert {r.scope for r in mine} == {"a"}
    assert len(shared.records) == 2 * len(mine)


def test_a_scoped_audit_is_an_audit():
    """ScopedAudit satisfies the Audit protocol, so every clearing surface takes it."""
    assert isinstance(ScopedAudit(MemoryAudit(), "a"), Audit)


@pytest.mark.parametrize("scope", ["", None, 3])
def test_a_scoped_audit_refuses_a_scope_that_is_not_a_non_empty_string(scope):
    """The scope names a history: it must be a non-empty string."""
    with pytest.raises((TypeError, ValueError), match="scope"):
        ScopedAudit(MemoryAudit(), scope)


def test_a_scoped_audit_refuses_what_is_not_an_audit_sink(tmp_path):
    """A path is not a sink: the error says how to make one."""
    with pytest.raises(TypeError, match="JsonlAudit"):
        ScopedAudit(tmp_path / "audit.jsonl", "a")  # type: ignore[arg-type]


def test_scopes_survive_a_reopened_sqlite_sink(tmp_path):
    """SQLiteAudit stores the scope: a new connection restores by scope."""
    history = _conversation("alpha")
    first = SQLiteAudit(tmp_path / "audit.db")
    out = clear_stale_results(history, FLAT, audit=ScopedAudit(first, "a"))
    first.close()
    again = SQLiteAudit(tmp_path / "audit.db")
    assert restore(out, ScopedAudit(again, "a")) == history
    assert restore(out, ScopedAudit(again, "b")) == out
    again.close()


def test_an_older_sqlite_audit_without_scopes_is_read_as_unscoped(tmp_path):
    """A database written before scopes existed opens, reads and takes new records."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE clearing_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
        " call_id TEXT NOT NULL, tool TEXT NOT NULL, chars INTEGER NOT NULL,"
        " tokens INTEGER NOT NULL, turn INTEGER NOT NULL, position INTEGER NOT NULL,"
        " format TEXT NOT NULL, original TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO clearing_audit (kind, call_id, tool, chars, tokens, turn, position, format,"
        " original) VALUES ('result', 'c', 't', 1, 1, 1, 2, 'anthropic', '\"x\"')"
    )
    db.commit()
    db.close()
    sink = SQLiteAudit(path)
    sink.write([AuditRecord("result", "d", "t", 1, 1, 1, 3, "anthropic", "y", scope="s")])
    assert [(r.call_id, r.scope) for r in sink.read()] == [("c", ""), ("d", "s")]
    sink.close()


def test_an_unscoped_jsonl_record_is_written_as_before(tmp_path):
    """Records without a scope keep the audit line's old shape (no ``scope`` key)."""
    sink = JsonlAudit(tmp_path / "a.jsonl")
    clear_stale_results(_conversation("alpha"), FLAT, audit=sink)
    lines = [orjson.loads(line) for line in sink.path.read_bytes().splitlines()]
    assert lines
    assert all("scope" not in line for line in lines)
    assert {r.scope for r in sink.read()} == {""}


def _reused(fmt: str = "anthropic") -> list[Any]:
    """One history whose server reuses ``call_0`` in every turn."""
    return render(
        fmt,
        [
            Turn((Call("call_0", "read_file", {"path": "/a"}, Res(big("first"))),), user="go"),
            Turn((Call("call_0", "read_file", {"path": "/b"}, Res(big("second"))),)),
            Turn(),
            Turn(),
        ],
    )


def test_a_reused_id_in_one_history_restores_each_at_its_own_position():
    """call_0 cleared twice in one history: each placeholder gets its own original back."""
    history = _reused()
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT, audit=audit)
    assert sum(r.cleared for r in view(out).results) == 2
    assert restore(out, audit) == history


def test_a_moved_history_with_a_reused_id_is_not_restored_by_guessing():
    """Messages moved (one prepended): a record no longer at its position is not used when
    the id was reused, since either original could be the one (the old fallback gave both
    placeholders the latest original)."""
    history = _reused()
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT, audit=audit)
    moved = [{"role": "user", "content": "context"}, *out]
    assert restore(moved, audit) == moved


def test_a_moved_history_with_unique_ids_is_still_restored():
    """Messages moved, ids unique: the one record of each id is unambiguous and restores."""
    history = _conversation("alpha")
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT, audit=audit)
    note = {"role": "user", "content": "context"}
    assert restore([note, *out], audit) == [note, *history]


def test_blanked_arguments_are_not_restored_from_another_history():
    """Call arguments, too, are restored only from this history's records."""
    shared = MemoryAudit()
    clear_stale_results(_conversation("alpha"), INPUTS, audit=shared)
    out_b = clear_stale_results(_conversation("beta"), INPUTS, audit=shared)
    assert "alpha" not in orjson.dumps(restore(out_b, shared)).decode()


@pytest.mark.parametrize("fmt", FORMATS)
def test_arguments_are_not_restored_through_a_result_both_histories_share(fmt):
    """Two scoped histories reuse call_0 with the same result but other arguments; read
    unscoped, the shared result does not make the other history's arguments this one's."""

    def run(args: dict[str, Any]) -> list[Any]:
        return render(
            fmt, [Turn((Call("call_0", "search", args, Res(big("w", 90))),), user="go"), Turn()]
        )

    sink = MemoryAudit()
    out = clear_stale_results(run({}), INPUTS, audit=ScopedAudit(sink, "one"))
    clear_stale_results(run({"q": 0}), INPUTS, audit=ScopedAudit(sink, "two"))
    assert [c.args for c in view(restore(out, sink), fmt).calls] == [{}]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FORMATS), turns(max_turns=6), turns(max_turns=6))
def test_restore_from_a_shared_sink_gives_only_this_historys_originals(fmt, one, other):
    """Property: two histories (their ids repeat: call_0, call_1, ...) share a sink. Scoped,
    each restores exactly; unscoped, every result restored is this history's own original or
    still its placeholder, never the other history's."""
    first, second = render(fmt, one), render(fmt, other)
    sink = MemoryAudit()
    out = clear_stale_results(first, INPUTS, audit=ScopedAudit(sink, "one"))
    out_other = clear_stale_results(second, INPUTS, audit=ScopedAudit(sink, "two"))
    assert restore(out, ScopedAudit(sink, "one")) == first
    assert restore(out_other, ScopedAudit(sink, "two")) == second
    restored = view(restore(out, sink), fmt).results
    originals, cleared = view(first, fmt).results, view(out, fmt).results
    for got, original, placeholder in zip(restored, originals, cleared, strict=True):
        assert got.text in (original.text, placeholder.text)
    calls = view(restore(out, sink), fmt).calls, view(first, fmt).calls, view(out, fmt).calls
    for call, original_call, blanked in zip(*calls, strict=True):
        assert call.args in (original_call.args, blanked.args)


def test_a_moved_history_never_gets_an_original_over_a_whole_result_of_a_reused_id():
    """call_0 is cleared in turn 1 and whole in turn 3: after a move, the placeholder gets
    its original back and the whole result stays as it is."""
    history = render(
        "anthropic",
        [
            Turn((Call("call_0", "read_file", {"path": "/a"}, Res(big("old"))),), user="go"),
            Turn(),
            Turn((Call("call_0", "read_file", {"path": "/b"}, Res(big("new"))),)),
        ],
    )
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT, audit=audit)
    assert [r.cleared for r in view(out).results] == [True, False]
    note = {"role": "user", "content": "context"}
    assert restore([note, *out], audit) == [note, *history]

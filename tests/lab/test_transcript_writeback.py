"""clear_file and restore_file: clearing written back into the file's own format, and undone."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy, JsonlAudit, is_placeholder, restore, view
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts import clear_file, load_file, restore_file
from tests._profile import examples
from tests._shared import sample, shared_data
from tests.clearing.strategies_clearing import policies
from tests.lab.strategies_transcripts import RENDERERS, histories, styles

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
GOOD = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file() and p.parent.name not in ("malformed", "unknown") and load_file(p)
)
# Each example writes, loads, clears and restores a file; 20 per format (13 formats) keeps
# the full profile under a minute.
SETTINGS = settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(DATA)) for p in paths]


TURN_END = ClearingPolicy(cache=None)  # clear whatever is stale: the write-back is under test


def _cleared(path: Path, folder: Path, **options) -> tuple[Path, Path]:
    out, audit = folder / f"cleared{path.suffix}", folder / "audit.jsonl"
    options.setdefault("policy", TURN_END)
    clear_file(path, out, audit=audit, **options)
    return out, audit


def _result_texts(path: Path) -> list[list[str]]:
    """Per run, the text of every tool result, in order."""
    return [[r.text for r in view(t.messages, t.format).results] for t in load_file(path)]


@pytest.mark.parametrize("path", GOOD, ids=_ids(GOOD))
def test_clear_then_restore_gives_the_same_bytes(path, tmp_path):
    """Every format: restoring a cleared file from its audit gives the input byte for byte."""
    out, audit = _cleared(path, tmp_path)
    assert out.read_bytes() != path.read_bytes()
    assert restore_file(out, audit, tmp_path / "back") > 0
    assert (tmp_path / "back").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", GOOD, ids=_ids(GOOD))
def test_cleared_file_loads_in_its_own_format(path, tmp_path):
    """The output is the same kind of file: same runs, same messages, results placeholders."""
    out, _ = _cleared(path, tmp_path)
    before, after = load_file(path), load_file(out)
    assert [(t.source, t.format, len(t.messages)) for t in after] == [
        (t.source, t.format, len(t.messages)) for t in before
    ]
    changed = 0
    for old_run, new_run in zip(_result_texts(path), _result_texts(out), strict=True):
        for old, new in zip(old_run, new_run, strict=True):
            assert new == old or is_placeholder(new)
            changed += new != old
    assert changed


@pytest.mark.parametrize("path", GOOD, ids=_ids(GOOD))
def test_only_cleared_values_change(path, tmp_path):
    """Apart from the replaced result contents, the cleared file parses to the same data."""
    out, audit = _cleared(path, tmp_path)
    entries = [json.loads(line)["file"] for line in audit.read_text().splitlines()]

    def blanked(file: Path) -> list:
        text = file.read_text(encoding="utf-8-sig")
        docs = (
            [json.loads(x) for x in text.splitlines() if x.strip()]
            if file.suffix == ".jsonl"
            else [json.loads(text)]
        )
        for e in entries:
            node = docs[e["line"] - 1] if e["line"] is not None else docs[0]
            for key in e["path"][:-1]:
                node = node[key]
            node[e["path"][-1]] = None
        return docs

    assert blanked(out) == blanked(path)


def test_untouched_jsonl_lines_stay_byte_identical(tmp_path):
    """In a JSON Lines session only the lines holding cleared results differ."""
    path = DATA / "claude_code" / "session.jsonl"
    out, audit = _cleared(path, tmp_path)
    edited = {json.loads(line)["file"]["line"] for line in audit.read_text().splitlines()}
    old, new = path.read_bytes().splitlines(True), out.read_bytes().splitlines(True)
    assert len(old) == len(new)
    assert [n for n, (a, b) in enumerate(zip(old, new, strict=False), 1) if a != b] == sorted(
        edited
    )


def test_claude_code_display_copy_is_left_alone(tmp_path):
    """Claude Code's toolUseResult (never sent to the model) keeps the original output."""
    path = DATA / "claude_code" / "session.jsonl"
    out, audit = _cleared(path, tmp_path)
    line = json.loads(audit.read_text().splitlines()[0])["file"]["line"]
    record = json.loads(out.read_text().splitlines()[line - 1])
    assert is_placeholder(record["message"]["content"][0]["content"])
    assert not is_placeholder(record["toolUseResult"]["stdout"])


def test_audit_restores_a_reloaded_history(tmp_path):
    """The audit is a JsonlAudit: restore() on the reloaded cleared history gives the original."""
    path = DATA / "openai_chat" / "messages.jsonl"
    out, audit = _cleared(path, tmp_path)
    (original,), (cleared,) = load_file(path), load_file(out)
    assert restore(cleared.messages, JsonlAudit(audit)) == original.messages


def test_audit_keeps_an_original_once_when_json_spells_it_back(tmp_path):
    """An original that json.dumps spells exactly as the file did is stored once, not twice."""
    _, audit = _cleared(DATA / "openai_chat" / "list.json", tmp_path)
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert all("raw" not in e["file"] and e["file"]["spelling"] == "ascii" for e in entries)


def test_audit_keeps_the_raw_text_of_unusual_spellings(tmp_path):
    """A file escaping "/" as "\\/" (as PHP does) keeps its raw text, and restores exactly."""
    path = tmp_path / "php.json"
    text = (DATA / "openai_chat" / "list.json").read_text().replace("lorem", "lo\\/rem")
    path.write_text(text)
    out, audit = tmp_path / "out.json", tmp_path / "audit.jsonl"
    clear_file(path, out, TURN_END, audit=audit)
    raws = [json.loads(line)["file"].get("raw") for line in audit.read_text().splitlines()]
    assert any(raw is not None and "\\/" in raw for raw in raws)
    restore_file(out, audit, tmp_path / "back.json")
    assert (tmp_path / "back.json").read_bytes() == path.read_bytes()


def test_runs_are_cleared_one_by_one(tmp_path):
    """In a file of several runs each run is cleared on its own, as if alone."""
    path = DATA / "tau_bench" / "airline.json"
    out, _ = _cleared(path, tmp_path, policy=ClearingPolicy(cache=None, keep_turns=3))
    alone = []
    for run in load_file(path):
        single = tmp_path / f"run{run.run}.json"
        single.write_text(json.dumps(json.loads(path.read_text())[run.run]["traj"]))
        clear_file(
            single, tmp_path / f"out{run.run}.json", ClearingPolicy(cache=None, keep_turns=3)
        )
        alone.append(view(load_file(tmp_path / f"out{run.run}.json")[0].messages).results)
    together = [view(t.messages).results for t in load_file(out)]
    assert [[r.text for r in run] for run in together] == [[r.text for r in run] for run in alone]


def test_clearing_in_place(tmp_path):
    """The output may be the input: it is replaced whole, and the audit restores it."""
    path = tmp_path / "session.jsonl"
    shutil.copy(DATA / "claude_code" / "session.jsonl", path)
    done = clear_file(path, path, TURN_END, audit=tmp_path / "audit.jsonl")
    assert done.cleared
    assert path.read_bytes() != (DATA / "claude_code" / "session.jsonl").read_bytes()
    restore_file(path, tmp_path / "audit.jsonl", path)
    assert path.read_bytes() == (DATA / "claude_code" / "session.jsonl").read_bytes()


def test_report_counts_results_and_tokens(tmp_path):
    """FileClearing gives the runs, results, cleared results and tokens before and after."""
    done = clear_file(DATA / "tau_bench" / "airline.json", tmp_path / "out.json", TURN_END)
    assert (done.source, done.runs, done.results) == ("tau_bench", 3, 15)
    assert 0 < done.cleared < done.results
    assert done.tokens_after < done.tokens_before
    assert done.audit is None


def test_policy_options_are_applied(tmp_path):
    """A wide keep window clears nothing; excluding every tool clears nothing either."""
    path = DATA / "openai_chat" / "list.json"
    assert (
        clear_file(path, tmp_path / "a.json", ClearingPolicy(cache=None, keep_turns=50)).cleared
        == 0
    )
    tools = {"search_logs", "read_file", "bash"}
    assert (
        clear_file(
            path, tmp_path / "b.json", ClearingPolicy(cache=None, retention=dict.fromkeys(tools))
        ).cleared
        == 0
    )
    assert (tmp_path / "a.json").read_bytes() == path.read_bytes()


def test_clearing_inputs_is_refused(tmp_path):
    """Only results are written back: a policy that blanks tool inputs is refused."""
    with pytest.raises(ConfigurationError, match="clear_tool_inputs"):
        clear_file(
            DATA / "openai_chat" / "list.json",
            tmp_path / "o",
            ClearingPolicy(cache=None, clear_tool_inputs=True),
        )


def test_restoring_twice_changes_nothing(tmp_path):
    """A restored file restored again with the same audit is unchanged."""
    path = DATA / "anthropic" / "messages.json"
    out, audit = _cleared(path, tmp_path)
    restore_file(out, audit, tmp_path / "once.json")
    assert restore_file(tmp_path / "once.json", audit, tmp_path / "twice.json") == 0
    assert (tmp_path / "twice.json").read_bytes() == path.read_bytes()


def test_successive_clearings_share_an_audit(tmp_path):
    """a -> b then b -> c into one audit: restoring c gives a back."""
    path = DATA / "openai_chat" / "messages.jsonl"
    audit = tmp_path / "audit.jsonl"
    clear_file(path, tmp_path / "b.jsonl", ClearingPolicy(cache=None, keep_turns=4), audit=audit)
    clear_file(
        tmp_path / "b.jsonl",
        tmp_path / "c.jsonl",
        ClearingPolicy(cache=None, keep_turns=1),
        audit=audit,
    )
    restore_file(tmp_path / "c.jsonl", audit, tmp_path / "a.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == path.read_bytes()


def test_an_audit_serves_one_file(tmp_path):
    """Appending the originals of an unrelated file to an audit is refused up front."""
    audit = tmp_path / "audit.jsonl"
    clear_file(DATA / "openai_chat" / "list.json", tmp_path / "a.json", TURN_END, audit=audit)
    with pytest.raises(ConfigurationError, match="one audit serves one file"):
        clear_file(DATA / "anthropic" / "messages.json", tmp_path / "b.json", TURN_END, audit=audit)


def test_audit_may_not_be_the_transcript(tmp_path):
    """The audit cannot be the input or the output file."""
    path = DATA / "openai_chat" / "list.json"
    with pytest.raises(ConfigurationError, match="file of its own"):
        clear_file(path, tmp_path / "o.json", TURN_END, audit=tmp_path / "o.json")


def test_restore_refuses_a_file_the_audit_was_not_written_for(tmp_path):
    """Restoring another file with an audit fails with a clear message and writes nothing."""
    _, audit = _cleared(DATA / "openai_chat" / "list.json", tmp_path)
    other = DATA / "openai_chat" / "body.json"
    with pytest.raises(TranscriptError, match="does not match the audit") as exc:
        restore_file(other, audit, tmp_path / "out.json")
    assert str(exc.value).startswith(f"{other}: ")
    assert not (tmp_path / "out.json").exists()


def test_restore_refuses_a_changed_file(tmp_path):
    """A cleared file edited since (a placeholder rewritten) is named, with the line."""
    out, audit = _cleared(DATA / "openai_chat" / "messages.jsonl", tmp_path)
    lines = out.read_text().splitlines(True)
    entry = json.loads(audit.read_text().splitlines()[0])["file"]
    edited = json.loads(lines[entry["line"] - 1])
    edited["content"] = "edited by hand"
    lines[entry["line"] - 1] = json.dumps(edited) + "\n"
    out.write_text("".join(lines))
    with pytest.raises(TranscriptError, match="holds neither what clearing wrote") as exc:
        restore_file(out, audit, tmp_path / "back.jsonl")
    assert exc.value.line == entry["line"]
    assert str(exc.value).startswith(f"{out}:{entry['line']}: does not match the audit")


def test_restore_needs_file_locations(tmp_path):
    """A plain JsonlAudit (no file locations) is refused with a hint."""
    audit = tmp_path / "plain.jsonl"
    audit.write_text(json.dumps({"kind": "result", "call_id": "c", "original": "x"}) + "\n")
    with pytest.raises(TranscriptError, match="no file locations"):
        restore_file(DATA / "openai_chat" / "list.json", audit, tmp_path / "o.json")


def test_a_failed_clearing_writes_nothing(tmp_path):
    """A run that turns out malformed leaves no output and appends nothing to the audit."""
    path = DATA / "malformed" / "third_run_broken.json"
    with pytest.raises(TranscriptError, match="list element 2"):
        clear_file(path, tmp_path / "out.json", TURN_END, audit=tmp_path / "audit.jsonl")
    assert sorted(tmp_path.iterdir()) == []


def test_not_a_transcript_is_an_error(tmp_path):
    """clear_file on a README says the file is not a transcript."""
    with pytest.raises(TranscriptError, match="not a transcript"):
        clear_file(DATA / "unknown" / "README.md", tmp_path / "o", TURN_END)


def test_shared_transcripts_round_trip(tmp_path):
    """Every recorded file: clear, then restore, gives the original bytes back."""
    root = shared_data() / "transcripts"
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for n, path in enumerate(sample(files, key=lambda p: p.relative_to(root).parts[0])):
        out, audit = tmp_path / f"{n}{path.suffix}", tmp_path / f"{n}.audit"
        clear_file(path, out, TURN_END, audit=audit)
        restore_file(out, audit, tmp_path / f"{n}.back")
        assert (tmp_path / f"{n}.back").read_bytes() == path.read_bytes(), path


@pytest.mark.parametrize("layout", list(RENDERERS))
@SETTINGS
@given(data=st.data(), style=styles)
def test_clear_then_restore_returns_the_original(layout, data, style):
    """Property, every format: restore(clear(file)) is the file, and the cleared file reloads
    to a history whose results are the originals or placeholders."""
    source, suffix, renderer = RENDERERS[layout]
    raw = renderer(data.draw(histories), style)
    policy = data.draw(policies).replace(clear_tool_inputs=False)
    with tempfile.TemporaryDirectory() as folder:
        path, out, audit = Path(folder, "t" + suffix), Path(folder, "c" + suffix), Path(folder, "a")
        path.write_bytes(raw)
        before = load_file(path)
        assert before
        assert {t.source for t in before} == {source}
        done = clear_file(path, out, policy, audit=audit)
        event("something cleared" if done.cleared else "nothing cleared")
        after = load_file(out)
        for old, new in zip(before, after, strict=True):
            for r_old, r_new in zip(
                view(old.messages, old.format).results,
                view(new.messages, new.format).results,
                strict=True,
            ):
                assert r_new.text == r_old.text or is_placeholder(r_new.text)
        assert restore_file(out, audit, Path(folder, "r")) == done.cleared
        assert Path(folder, "r").read_bytes() == raw
        if len(before) == 1:
            assert (
                restore(after[0].messages, JsonlAudit(audit), format=after[0].format)
                == before[0].messages
            )

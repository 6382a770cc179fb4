"""``analyze``, ``clear`` and ``restore`` on files as they are found: live sessions, symlinks,
folders given as outputs, temporary files of killed runs, audits torn by a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.transcripts import TornLineWarning, clear_file, restore_file
from slimtools.transcripts._rewrite import TEMP_MARK, replacing
from tests.lab.cli_helpers import SESSION, cleared_with_audit, cli

TORN = b'{"type":"user","message":{"role":"user","content":"half writ'


def _live(tmp_path: Path) -> Path:
    """The sample session with a last line still being written (no line end yet)."""
    path = tmp_path / "live.jsonl"
    path.write_bytes(SESSION.read_bytes() + TORN)
    return path


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_analyze_reads_a_live_session_and_says_the_last_line_was_skipped(tmp_path, capsys):
    """A session whose last line is half written is analysed whole but for that line."""
    status, out, err = cli(capsys, "analyze", str(_live(tmp_path)))
    whole = tmp_path / "full.jsonl"
    whole.write_bytes(SESSION.read_bytes())
    _, expected, _ = cli(capsys, "analyze", str(whole))
    assert status == 0
    assert out.replace("live.jsonl", "full.jsonl") == expected
    line = SESSION.read_bytes().count(b"\n") + 1
    assert err.splitlines() == [
        f"slimtools: warning: {tmp_path / 'live.jsonl'}: line {line} is incomplete "
        "(still being written, or a crash mid-write): skipped"
    ]


def test_clear_of_a_live_session_clears_the_complete_lines_and_copies_the_torn_one(
    tmp_path, capsys
):
    """clear writes the complete lines cleared and the torn tail as it was, with a warning."""
    out = tmp_path / "out.jsonl"
    status, text, err = cli(
        capsys, "clear", "--cache", "none", str(_live(tmp_path)), "-o", str(out)
    )
    assert status == 0
    assert "cleared 4 of 7 tool results" in text
    assert "is incomplete" in err
    assert out.read_bytes().endswith(b"\n" + TORN)


def test_clear_in_place_of_a_live_session_is_refused_and_changes_nothing(tmp_path, capsys):
    """Its writer would go on appending to the replaced file: refuse, say why, touch nothing."""
    live = _live(tmp_path)
    before = live.read_bytes()
    status, _, err = cli(capsys, "clear", "--cache", "none", str(live), "-o", str(live))
    assert status == 1
    assert "still being written" in err
    assert "another file" in err
    assert live.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.jsonl"]


def test_a_malformed_line_with_a_line_end_is_still_an_error(tmp_path, capsys):
    """Only a last line without its line end is torn; a complete bad line fails the file."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(SESSION.read_bytes() + TORN + b"\n")
    status, _, err = cli(capsys, "analyze", str(path))
    assert status == 1
    assert "not valid JSON" in err


def test_clear_into_a_folder_names_the_folder_not_a_temporary_file(tmp_path, capsys):
    """`clear -o DIR`: one line naming DIR, and no temporary file left anywhere."""
    folder = tmp_path / "out"
    folder.mkdir()
    status, _, err = cli(capsys, "clear", "--cache", "none", str(SESSION), "-o", str(folder))
    assert status == 1
    assert err == f"slimtools: cannot write {folder}: is a directory, not a file\n"
    assert list(tmp_path.rglob(f"*{TEMP_MARK}*")) == []


def test_clear_to_an_unwritable_path_names_the_path(tmp_path, capsys):
    """An output under a file (no folder can be made there) is reported by its own name."""
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    target = blocker / "out.jsonl"
    status, _, err = cli(capsys, "clear", "--cache", "none", str(SESSION), "-o", str(target))
    assert status == 1
    assert err.startswith(f"slimtools: cannot write {target}: ")
    assert TEMP_MARK not in err


def test_restore_into_a_folder_names_the_folder(tmp_path, capsys):
    """restore -o DIR fails the same way, naming DIR."""
    cleared, audit = cleared_with_audit(tmp_path)
    capsys.readouterr()
    folder = tmp_path / "back"
    folder.mkdir()
    status, _, err = cli(capsys, "restore", str(cleared), "--audit", str(audit), "-o", str(folder))
    assert status == 1
    assert err == f"slimtools: cannot write {folder}: is a directory, not a file\n"


def test_in_place_clear_of_a_symlink_writes_through_to_its_target(tmp_path, capsys):
    """The link stays a link; the file it points to is cleared."""
    real = tmp_path / "store" / "session.jsonl"
    real.parent.mkdir()
    real.write_bytes(SESSION.read_bytes())
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    status, _, _ = cli(capsys, "clear", "--cache", "none", str(link), "-o", str(link))
    assert status == 0
    assert link.is_symlink()
    assert link.resolve() == real.resolve()
    assert real.read_bytes() != SESSION.read_bytes()
    assert list(tmp_path.rglob(f"*{TEMP_MARK}*")) == []


def test_temporary_files_are_named_for_the_target_and_the_process(tmp_path):
    """While a file is written, its temporary twin says whose it is: .NAME.slimtools-PID-."""
    target = tmp_path / "out.jsonl"
    with replacing(target) as fh:
        fh.write(b"{}\n")
        (temp,) = [p.name for p in tmp_path.iterdir()]
    assert temp.startswith(f".out.jsonl{TEMP_MARK}{os.getpid()}-")
    assert temp.endswith(".tmp")
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


@pytest.mark.subprocess
def test_a_later_clear_removes_the_temporary_files_of_a_killed_run(tmp_path, capsys):
    """Temp files of a dead pid beside the output and the audit go; a live pid's stay."""
    out, audit = tmp_path / "out.jsonl", tmp_path / "a.jsonl"
    dead = _dead_pid()
    stale = [
        tmp_path / f".out.jsonl{TEMP_MARK}{dead}-abc123.tmp",
        tmp_path / f".a.jsonl{TEMP_MARK}{dead}-def456.tmp",
    ]
    live = tmp_path / f".out.jsonl{TEMP_MARK}{os.getppid()}-zzz999.tmp"
    for path in [*stale, live]:
        path.write_bytes(b"x" * 1000)
    status, _, err = cli(
        capsys, "clear", "--cache", "none", str(SESSION), "-o", str(out), "--audit", str(audit)
    )
    assert status == 0
    assert not any(p.exists() for p in stale)
    assert live.exists()
    assert err.count("temporary file(s) an interrupted slimtools run left") == 2


def _tear(audit: Path) -> bytes:
    """Append half a record to the audit, as a crash mid-append leaves it; return it."""
    first = audit.read_bytes().splitlines()[0]
    torn = first[: len(first) // 2]
    with audit.open("ab") as fh:
        fh.write(torn)
    return torn


def test_restore_with_a_torn_audit_tail_restores_the_intact_records(tmp_path, capsys):
    """The torn last record is skipped with a warning; the file comes back byte for byte."""
    cleared, audit = cleared_with_audit(tmp_path)
    _tear(audit)
    capsys.readouterr()
    back = tmp_path / "back.jsonl"
    status, text, err = cli(capsys, "restore", str(cleared), "--audit", str(audit), "-o", str(back))
    assert status == 0
    assert text == f"restored 4 tool results from {audit} into {back}\n"
    assert "is incomplete" in err
    assert "restoring what the other records allow" in err
    assert back.read_bytes() == SESSION.read_bytes()


def test_clear_continues_after_a_torn_audit_tail(tmp_path, capsys):
    """A further clearing warns, appends its records on a line of their own, and restores."""
    cleared, audit = cleared_with_audit(tmp_path)
    torn = _tear(audit)
    capsys.readouterr()
    again = tmp_path / "again.jsonl"
    argv = ["clear", "--cache", "none", "--keep-turns", "0", str(cleared), "-o", str(again)]
    status, _, err = cli(capsys, *argv, "--audit", str(audit))
    assert status == 0
    assert "its last line is incomplete" in err
    assert torn + b"\n" in audit.read_bytes()
    back = tmp_path / "back.jsonl"
    status, _, _ = cli(capsys, "restore", str(again), "--audit", str(audit), "-o", str(back))
    assert status == 0
    assert back.read_bytes() == SESSION.read_bytes()


def test_restore_file_warns_with_a_torn_line_warning(tmp_path):
    """The library call warns with TornLineWarning, naming the audit and the line."""
    cleared, audit = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    clear_file(SESSION, cleared, ClearingPolicy(cache=None), audit=audit)
    _tear(audit)
    lines = audit.read_bytes().count(b"\n") + 1
    with pytest.warns(TornLineWarning) as caught:
        restore_file(cleared, audit, tmp_path / "back.jsonl")
    (warning,) = [w.message for w in caught if isinstance(w.message, TornLineWarning)]
    assert (warning.path, warning.line) == (audit, lines)


def test_a_garbage_audit_line_is_still_an_error(tmp_path, capsys):
    """Only a record cut short is forgiven: other text in the audit still fails restore."""
    cleared, audit = cleared_with_audit(tmp_path)
    with audit.open("ab") as fh:
        fh.write(b"hello, not a record\n")
    capsys.readouterr()
    back = tmp_path / "back.jsonl"
    status, _, err = cli(capsys, "restore", str(cleared), "--audit", str(audit), "-o", str(back))
    assert status == 1
    assert "not a JSON object" in err


KILLED_MID_WRITE = """
import os, signal, sys
from slimtools.cli import main
from slimtools.transcripts import _rewrite

def die(self):  # everything is written to the temporary files: kill -9 before the rename
    os.kill(os.getpid(), signal.SIGKILL)

_rewrite.Rewriter.finish = die
main(sys.argv[1:])
"""


@pytest.mark.subprocess
def test_kill_9_during_clear_leaves_temporary_files_the_next_run_removes(tmp_path, capsys):
    """A clear killed mid-write leaves its two temp files; the next clear removes both."""
    out, audit = tmp_path / "out.jsonl", tmp_path / "a.jsonl"
    argv = ["clear", "--cache", "none", str(SESSION), "-o", str(out), "--audit", str(audit)]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, *argv],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -9
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2
    assert left[0].startswith(f".a.jsonl{TEMP_MARK}")
    assert left[1].startswith(f".out.jsonl{TEMP_MARK}")
    status, _, err = cli(capsys, *argv)
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "out.jsonl"]
    assert "interrupted slimtools run left" in err

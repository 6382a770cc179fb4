"""``slimtools clear`` and ``slimtools restore``, run as a user runs them."""

from __future__ import annotations

import json

import pytest

from slimtools.clearing import DEFAULT_RETENTION, ClearingPolicy, is_placeholder, view
from slimtools.cli import main
from slimtools.transcripts import clear_file, load_file
from tests._ports import run, slimtools
from tests._shared import shared_data
from tests.lab.cli_helpers import DATA, SESSION, cleared_with_audit, cli


def test_clear_writes_the_same_format_and_says_what_it_did(tmp_path, capsys):
    """clear prints the source, runs, results cleared and tokens; the file reloads the same."""
    out = tmp_path / "cleared.jsonl"
    status, text, err = cli(
        capsys,
        "clear",
        "--cache",
        "none",
        str(SESSION),
        "-o",
        str(out),
        "--audit",
        str(tmp_path / "a.jsonl"),
    )
    assert status == 0
    assert err == ""
    first, second = text.splitlines()
    assert first.startswith(
        f"claude_code transcript {SESSION} (1 run): cleared 4 of 7 tool results, "
    )
    assert first.endswith(")")
    assert " -> " in first
    assert second == f"wrote {out}; originals appended to {tmp_path / 'a.jsonl'}"
    (t,) = load_file(out)
    assert t.source == "claude_code"
    assert sum(is_placeholder(r.text) for r in view(t.messages).results) == 4


def test_restore_gives_back_the_original_bytes(tmp_path, capsys):
    """clear then restore: the restored file is byte-identical, and restore says how many."""
    cleared, audit, back = tmp_path / "c.jsonl", tmp_path / "a.jsonl", tmp_path / "r.jsonl"
    main(["clear", "--cache", "none", str(SESSION), "-o", str(cleared), "--audit", str(audit)])
    capsys.readouterr()
    status, text, _ = cli(capsys, "restore", str(cleared), "--audit", str(audit), "-o", str(back))
    assert status == 0
    assert text == f"restored 4 tool results from {audit} into {back}\n"
    assert back.read_bytes() == SESSION.read_bytes()


@pytest.mark.parametrize(
    "relative",
    [
        "claude_code/subagent.jsonl",
        "openhands/resolver_mock_output.jsonl",
        "swe_agent/replay__marshmallow-code__marshmallow-1867__function_calling__install-1__marshmallow-code__marshmallow-1867.traj",
        "tau_bench/gpt-4o-airline.json",
        "swe_agent/ctf__web__i_got_id_demo.traj",
        "mini_swe_agent/django__django-11095.traj.json",
    ],
)
def test_shared_transcripts_round_trip_through_the_commands(relative, tmp_path, capsys):
    """On recorded runs: clear shrinks the file, restore gives back the original bytes."""
    path = shared_data() / "transcripts" / relative
    cleared, audit, back = tmp_path / f"c{path.suffix}", tmp_path / "a.jsonl", tmp_path / "r"
    assert (
        main(["clear", "--cache", "none", str(path), "-o", str(cleared), "--audit", str(audit)])
        == 0
    )
    assert main(["restore", str(cleared), "--audit", str(audit), "-o", str(back)]) == 0
    out = capsys.readouterr().out
    assert "cleared 0 of" not in out
    assert cleared.stat().st_size < path.stat().st_size
    assert back.read_bytes() == path.read_bytes()


def test_jsonl_lines_without_cleared_results_are_untouched(tmp_path):
    """One run a line: the run with nothing to clear keeps its line byte for byte."""
    path = shared_data() / "transcripts" / "openhands" / "resolver_mock_output.jsonl"
    cleared, audit = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    main(["clear", "--cache", "none", str(path), "-o", str(cleared), "--audit", str(audit)])
    edited = {json.loads(line)["file"]["line"] for line in audit.read_text().splitlines()}
    old, new = path.read_bytes().splitlines(True), cleared.read_bytes().splitlines(True)
    assert edited == {2}
    assert (old[0] == new[0], old[1] == new[1]) == (True, False)


@pytest.mark.parametrize(
    ("options", "policy"),
    [
        ([], {}),
        (["--keep-turns", "10"], {"keep_turns": 10}),
        (["--keep-turns", "0"], {"keep_turns": 0}),
        (
            ["--exclude-tool", "search_logs", "--exclude-tool", "bash"],
            {"retention": {**DEFAULT_RETENTION, "search_logs": None, "bash": None}},
        ),
        (["--clear-at-least", "1000000"], {"clear_at_least": 1_000_000}),
    ],
)
def test_policy_options_reach_the_policy(options, policy, tmp_path, capsys):
    """Each option clears what the same ClearingPolicy clears, and the same file comes out."""
    path = DATA / "openai_chat" / "list.json"
    main(["clear", "--cache", "none", str(path), "-o", str(tmp_path / "cli.json"), *options])
    printed = capsys.readouterr().out.split("cleared ")[1].split(" of")[0]
    done = clear_file(path, tmp_path / "lib.json", ClearingPolicy(cache=None, **policy))
    assert int(printed) == done.cleared
    assert (tmp_path / "cli.json").read_bytes() == (tmp_path / "lib.json").read_bytes()


def test_keep_head_option_shortens_placeholders(tmp_path):
    """--keep-head 0 keeps no head of the original in the placeholders."""
    path = DATA / "openai_chat" / "list.json"
    main(
        ["clear", "--cache", "none", str(path), "-o", str(tmp_path / "o.json"), "--keep-head", "0"]
    )
    (t,) = load_file(tmp_path / "o.json")
    heads = [r.text for r in view(t.messages).results if is_placeholder(r.text)]
    assert heads
    assert all("r0 line 0" not in h for h in heads)


def test_format_option_forces_the_reader(tmp_path, capsys):
    """--format names the reader; a file that does not fit fails with exit status 1."""
    path = DATA / "openai_chat" / "list.json"
    clear = ["clear", "--cache", "none", str(path), "-o", str(tmp_path / "o"), "--format"]
    assert main([*clear, "openai_chat"]) == 0
    assert main([*clear, "tau_bench"]) == 1
    assert "a tau-bench run needs a 'traj'" in capsys.readouterr().err


def test_malformed_file_fails_with_one_clear_line(tmp_path, capsys):
    """A broken transcript: exit status 1, one line naming the file, the line and the fault."""
    path = DATA / "malformed" / "cut_line.jsonl"
    status, out, err = cli(
        capsys, "clear", "--cache", "none", str(path), "-o", str(tmp_path / "o.jsonl")
    )
    assert status == 1
    assert out == ""
    assert err == f"slimtools: {path}:4: not valid JSON (Invalid control character, column 59)\n"
    assert not (tmp_path / "o.jsonl").exists()


def test_not_a_transcript_fails_cleanly(tmp_path, capsys):
    """A README is not a transcript: exit status 1 and a message saying so."""
    status, _, err = cli(
        capsys, "clear", str(DATA / "unknown" / "README.md"), "-o", str(tmp_path / "o")
    )
    assert status == 1
    assert "not a transcript slimtools recognises" in err


def test_missing_file_fails_cleanly(tmp_path, capsys):
    """A file that does not exist: exit status 1, named."""
    status, _, err = cli(
        capsys, "clear", "--cache", "none", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")
    )
    assert status == 1
    assert err.startswith(f"slimtools: {tmp_path / 'nope.jsonl'}: cannot be read")


def test_unwritable_output_fails_cleanly(tmp_path, capsys):
    """An output that cannot be written (a folder): exit status 1, no traceback."""
    (tmp_path / "out").mkdir()
    status, _, err = cli(
        capsys, "clear", "--cache", "none", str(SESSION), "-o", str(tmp_path / "out")
    )
    assert status == 1
    assert err.startswith("slimtools: cannot write ")
    assert len(err.splitlines()) == 1


def test_restore_of_a_file_that_does_not_match_the_audit(tmp_path, capsys):
    """restore with another file's audit: exit status 1, the mismatch named, nothing written."""
    _, audit = cleared_with_audit(tmp_path)
    other = DATA / "openai_chat" / "messages.jsonl"
    status, _, err = cli(
        capsys, "restore", str(other), "--audit", str(audit), "-o", str(tmp_path / "r")
    )
    assert status == 1
    assert "does not match the audit" in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_reusing_an_audit_for_another_file_is_a_usage_error(tmp_path, capsys):
    """An audit holding another file's originals is refused with exit status 2."""
    _, audit = cleared_with_audit(tmp_path)
    other = DATA / "openai_chat" / "messages.jsonl"
    status, _, err = cli(
        capsys, "clear", str(other), "-o", str(tmp_path / "d"), "--audit", str(audit)
    )
    assert status == 2
    assert "one audit serves one file" in err


def test_without_audit_a_note_warns_that_restore_is_impossible(tmp_path, capsys):
    """Clearing without --audit works but says the originals are gone."""
    status, _, err = cli(
        capsys, "clear", "--cache", "none", str(SESSION), "-o", str(tmp_path / "c.jsonl")
    )
    assert status == 0
    assert err.startswith("note: no --audit given")


@pytest.mark.parametrize(
    "argv",
    [
        ["clear", "x.jsonl"],  # no -o
        ["clear", "x.jsonl", "-o", "y", "--keep-turns", "-1"],
        ["clear", "x.jsonl", "-o", "y", "--payback-horizon", "0"],
        ["clear", "x.jsonl", "-o", "y", "--format", "chatgpt"],
        ["restore", "x.jsonl", "-o", "y"],  # no --audit
    ],
)
def test_usage_errors_exit_with_status_2(argv, capsys):
    """Missing or invalid options are usage errors (exit status 2) with argparse's message."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage: slimtools" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["clear", "restore"])
def test_help_shows_an_example(command, capsys):
    """--help ends with a runnable example and the exit statuses."""
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "example:\n  slimtools " in text
    assert "exit status: 0" in text


@pytest.mark.subprocess
def test_commands_run_as_a_program(tmp_path):
    """`python -m slimtools.cli clear/restore` in a shell: output, status and the files."""
    path = DATA / "tau_bench" / "airline.json"
    cleared, audit, back = tmp_path / "c.json", tmp_path / "a.jsonl", tmp_path / "r.json"
    done = run(
        slimtools("clear", "--cache", "none", str(path), "-o", str(cleared), "--audit", str(audit))
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"tau_bench transcript {path} (3 runs): cleared ")
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert {e["file"]["run"] for e in entries} == {0, 1, 2}
    done = run(slimtools("restore", str(cleared), "--audit", str(audit), "-o", str(back)))
    assert done.returncode == 0
    assert back.read_bytes() == path.read_bytes()
    bad = run(
        slimtools("clear", str(DATA / "malformed" / "latin1.jsonl"), "-o", str(tmp_path / "x"))
    )
    assert (bad.returncode, bad.stdout) == (1, "")
    assert bad.stderr.strip().endswith("latin1.jsonl:2: not UTF-8 text (byte 32)")


def test_clear_decides_with_the_cache_prices_by_default(tmp_path, capsys):
    """Without --cache, a small run's rewrite would not pay: nothing goes; none clears it."""
    path = DATA / "openai_chat" / "list.json"
    main(["clear", str(path), "-o", str(tmp_path / "a.json")])
    assert "cleared 0 of" in capsys.readouterr().out
    main(["clear", "--cache", "none", str(path), "-o", str(tmp_path / "b.json")])
    assert "cleared 4 of" in capsys.readouterr().out

"""``slimtools analyze --html``: one self-contained, redacted page whose figures are the JSON's."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.cli import _html
from slimtools.ledger.analyze import analyze
from slimtools.ledger.stream import RunReplay
from slimtools.ledger.timeline import RunTimeline, excerpt
from slimtools.redaction import redact
from slimtools.transcripts import SOURCES, stream_file
from tests._shared import shared_data
from tests.lab.cli_helpers import DATA, SESSION, cli, write_run

FORMAT_DIRS = sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name in SOURCES)


class Page(HTMLParser):
    """What a test reads back from a report: its figures, resources, scripts and text."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[tuple[list[Any], Any]] = []
        self.sums: dict[str, int] = {}
        self.resources: list[tuple[str, str, str]] = []
        self.data: dict[str, Any] | None = None
        self._in_data = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "data-figure" in found:
            self.figures.append(
                (json.loads(found["data-figure"] or ""), json.loads(found["data-value"] or ""))
            )
        if "data-sum" in found:
            self.sums[found["data-sum"] or ""] = int(found["data-value"] or 0)
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            if found.get(name):
                self.resources.append((tag, name, found[name] or ""))
        self._in_data = found.get("id") == "timeline-data"

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data = json.loads(data)
            self._in_data = False
        self.text.append(data)


def read_page(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def at(document: Any, keys: list[Any]) -> Any:
    for key in keys:
        document = document[key]
    return document


def report_and_json(capsys, tmp_path: Path, *paths: Path) -> tuple[Page, dict[str, Any], str]:
    out = tmp_path / "report.html"
    status, _, err = cli(capsys, "analyze", *map(str, paths), "--html", str(out))
    assert status == 0, err
    status, printed, err = cli(capsys, "analyze", *map(str, paths), "--json")
    assert status == 0, err
    return read_page(out), json.loads(printed), out.read_text(encoding="utf-8")


@pytest.mark.parametrize("folder", FORMAT_DIRS)
def test_every_figure_on_the_page_is_the_json_documents_value(folder, capsys, tmp_path):
    """Each figure the page shows is the value at its path in ``analyze --json``, for every
    transcript format analyze reads."""
    page, document, _ = report_and_json(capsys, tmp_path, DATA / folder)
    assert page.figures, "the page shows no figure"
    for keys, value in page.figures:
        assert at(document, keys) == value, keys
    runs = [b for f in document["files"] for b in f["runs"]]
    for name, value in page.sums.items():
        assert value == sum(b[name] for b in runs)


@pytest.mark.shared
def test_the_page_shows_the_recorded_bill_beside_the_modelled_one(capsys, tmp_path):
    """A transcript with usage gets the recorded and modelled bills at the top."""
    session = shared_data() / "transcripts" / "claude_code" / "short.jsonl"
    page, document, _ = report_and_json(capsys, tmp_path, session)
    (bill,) = document["files"][0]["runs"]
    assert page.sums["recorded_cost"] == bill["recorded_cost"]
    assert page.sums["modelled_cost"] == bill["modelled_cost"]
    assert (["files", 0, "runs", 0, "recorded_cost"], bill["recorded_cost"]) in page.figures


def test_the_page_loads_nothing_from_outside(capsys, tmp_path):
    """No src, href or CSS url(): styles, script and charts are inline."""
    page, _, text = report_and_json(capsys, tmp_path, DATA / "claude_code", DATA / "openai_chat")
    assert page.resources == []
    assert "url(" not in text
    assert "@import" not in text
    assert "default-src 'none'" in text  # and the browser is told to refuse any request


def _timeline(run, policy) -> RunTimeline:
    """The run's timeline under ``policy``, from the ledger's replay."""
    found = RunReplay(run.format, {"p": policy}, timeline=True).add_all(run.messages).finish()
    assert found.timeline is not None
    return found.timeline


def test_the_timeline_has_one_bar_per_tool_result(capsys, tmp_path):
    """The timeline data holds every tool result of every run, with its tool and tokens."""
    page, document, _ = report_and_json(capsys, tmp_path, DATA / "swe_agent")
    assert page.data is not None
    events = [e for run in page.data["runs"] for e in run["events"]]
    assert len(events) == document["total"]["tool_results"]
    tokens: dict[str, int] = {}
    for e in events:
        tool = page.data["tools"][e[0]]
        tokens[tool] = tokens.get(tool, 0) + e[2]
    assert tokens == {name: t["tokens"] for name, t in document["total"]["by_tool"].items()}


def test_cleared_results_carry_the_placeholder_the_policy_wrote(tmp_path):
    """A result the default policy clears is marked with its round and its placeholder."""
    path = write_run(tmp_path, rounds=8, chars=6_000)
    (run,) = stream_file(path)
    found = _timeline(run, ClearingPolicy(cache=None))
    cleared = [e for e in found.events if e.cleared is not None]
    assert cleared
    for e in cleared:
        assert e.cleared > e.round
        assert is_placeholder(e.placeholder)
    assert all(e.placeholder == "" for e in found.events if e.cleared is None)


@pytest.mark.parametrize("folder", FORMAT_DIRS)
def test_the_timeline_clears_what_the_ledger_clears(folder):
    """Per run and round, the results the timeline marks cleared are the ones the ledger
    counts as cleared, and its tokens per tool are the ledger's."""
    for path in sorted((DATA / folder).rglob("*")):
        if not path.is_file():
            continue
        result = analyze(path)
        if not result.files:
            continue
        runs = [_timeline(r, result.policies["default"]) for r in stream_file(path)]
        standing: dict[int, int] = {}
        tokens: dict[str, int] = {}
        for found in runs:
            count = 0
            by_round = {}
            for e in found.events:
                tokens[e.tool] = tokens.get(e.tool, 0) + e.tokens
                if e.cleared is not None:
                    by_round[e.cleared] = by_round.get(e.cleared, 0) + 1
            for r in range(1, found.rounds + 1):
                count += by_round.get(r, 0)
                standing[r] = standing.get(r, 0) + count
        series = result.total.series["default"].cleared
        assert [standing.get(r, 0) for r in range(1, len(series) + 1)] == list(series), path
        assert tokens == {n: t.total for n, t in result.total.tools.items()}, path


def test_secrets_in_results_are_redacted_on_the_page(capsys, tmp_path):
    """Credentials in a result's first lines and tool names never reach the page."""
    secret = "sk-ant-api03-" + "A1b2C3d4" * 6
    history = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c0", "function": {"name": "env", "arguments": "{}"}}],
        },
        {
            "role": "tool",
            "content": f"ANTHROPIC_API_KEY={secret}\npassword: hunter2 horse\n" + "x" * 400,
            "tool_call_ids": ["c0"],
        },
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "run.traj"
    path.write_text(json.dumps({"history": history}))
    out = tmp_path / "report.html"
    status, _, err = cli(capsys, "analyze", str(path), "--html", str(out))
    assert status == 0, err
    text = out.read_text(encoding="utf-8")
    assert secret not in text
    assert secret[:20] not in text
    assert "hunter2" not in text
    assert "[redacted]" in text


def test_markup_in_a_result_cannot_escape_its_place(capsys, tmp_path):
    """A result holding ``</script>`` and HTML is shown as text, not run or parsed."""
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c0", "function": {"name": "fetch", "arguments": "{}"}}],
        },
        {
            "role": "tool",
            "content": "</script><script>alert(1)</script><img src=x onerror=alert(2)>",
            "tool_call_ids": ["c0"],
        },
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "run.traj"
    path.write_text(json.dumps({"history": history}))
    out = tmp_path / "report.html"
    assert cli(capsys, "analyze", str(path), "--html", str(out))[0] == 0
    page = read_page(out)
    assert page.resources == []  # the <img src=x> stayed text
    assert page.data is not None
    assert "<script>alert(1)</script>" in page.data["runs"][0]["events"][0][5]


def test_texts_beyond_the_budget_are_left_out_largest_kept(monkeypatch, capsys, tmp_path):
    """Past the text budget, the smallest results lose their texts, never the largest."""
    monkeypatch.setattr(_html, "TEXT_BUDGET", 2_000)
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "function": {"name": "cat", "arguments": json.dumps({"n": i})}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        text = f"line of result {i}\n" * (50 + 40 * i)
        history.append({"role": "tool", "content": text, "tool_call_ids": [f"c{i}"]})
    history.append({"role": "assistant", "content": "done"})
    path = tmp_path / "run.traj"
    path.write_text(json.dumps({"history": history}))
    out = tmp_path / "report.html"
    assert cli(capsys, "analyze", str(path), "--cache", "none", "--html", str(out))[0] == 0
    data = read_page(out).data
    assert data is not None
    events = data["runs"][0]["events"]
    kept = [e for e in events if e[5]]
    left = [e for e in events if not e[5]]
    assert kept
    assert left
    assert min(e[2] for e in kept) >= max(e[2] for e in left)
    assert sum(len(e[5]) + len(e[6]) for e in kept) <= 2_000


def test_an_unwritable_report_path_fails_with_one_line(capsys, tmp_path):
    """A report that cannot be written is one line on stderr and status 1."""
    target = tmp_path / "missing" / "report.html"
    status, _, err = cli(capsys, "analyze", str(SESSION), "--html", str(target))
    assert status == 1
    assert err.strip().splitlines() == [err.strip()]
    assert "cannot write" in err


def test_excerpt_keeps_the_first_non_blank_lines_cut_and_marked():
    """The head of a result: its first non-blank lines, cut to the limit, with an ellipsis."""
    assert excerpt("\n\nalpha\n\nbeta\ngamma\ndelta\nepsilon", lines=3) == "alpha\nbeta\ngamma…"
    assert excerpt("short") == "short"
    assert len(excerpt("y" * 10_000, limit=50)) == 51


def test_a_secret_at_the_cut_is_masked_whole_not_shown_in_part():
    """A token the head's cut would halve is redacted before the cut: none of it shows."""
    token = "ghp_" + "A1b2C3d4E5" * 3 + "abcdef"
    head = excerpt("x" * 220 + " " + token + " and the rest")
    assert "ghp_" not in head
    assert "A1b2C3d4" not in head


def test_a_secret_at_the_edge_of_the_read_window_is_not_shown_in_part():
    """The window read for the head ends at white space, so it halves no secret either."""
    token = "ghp_" + "A1b2C3d4E5" * 3 + "abcdef"
    text = "\n".join(["ok"] * 2) + "\n" + "[redacted] " * 360 + token + " tail " * 100
    head = excerpt(text, limit=10_000, lines=10)
    assert "A1b2C3d4" not in head


HEAD_LINES = st.sampled_from(
    [
        "",
        "   ",
        "status ok",
        "token ghp_" + "A1b2C3d4E5" * 3 + "abcdef here",
        "password: two words",
        "-----BEGIN PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "-----END PRIVATE KEY-----",
        "x" * 300,
    ]
)


@given(lines=st.lists(HEAD_LINES, max_size=12))
def test_the_head_shows_no_more_than_redacting_the_whole_result_would(lines: list[str]) -> None:
    """Redacting only the head's lines shows what redacting the whole result shows, or
    less (a private key running past the head is masked to its end): never more."""
    text = "\n".join(lines)
    whole = excerpt(redact(text), limit=10_000).removesuffix("…")
    assert whole.startswith(excerpt(text, limit=10_000).removesuffix("…"))


def test_slimming_saves_only_on_results_over_the_budget():
    """Zero-config slimming pages a result over the budget and leaves smaller ones whole."""
    assert _html.slimming_saving(500) == 0
    assert _html.slimming_saving(30_000) == 30_000 - _html.PAGE_TOKENS

"""The public API as a user writes it; ``mypy tests/typing`` checks that it type-checks.

Nothing here runs in the test suite: mypy (strict, from pyproject.toml) is the test. Each
``assert_type`` pins what a user's editor infers. The ``page``/``limit`` keywords that
``paginate`` adds exist at run time only: static types see ``Callable[..., Envelope]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AliasPath, BaseModel, Field
from typing_extensions import assert_type

import slimtools
from slimtools import (
    Clip,
    Envelope,
    Toolkit,
    ToolResult,
    ToolSpec,
    paginate,
    project_fields,
    summarize_with_handle,
)
from slimtools.clearing import ClearingReport, clear_with_report
from slimtools.clip import clip_text
from slimtools.ledger import TokenLedger, tool_result_bill
from slimtools.redaction import describe_error, redact
from slimtools.stores import MemoryStore
from slimtools.tokens import count_tokens
from slimtools.typing import HandleStore, Scope, TokenCounter


class LogBrief(BaseModel):
    """The allowlist: nothing else reaches the model."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(80)] = Field(validation_alias="message")
    host: str | None = Field(default=None, validation_alias=AliasPath("source", "host"))


kit = Toolkit("logs", store=MemoryStore(max_items=10_000, ttl=600.0))


@kit.tool(category="search")
@summarize_with_handle(key="id", max_tokens=2_000)
@paginate(limit=3, max_limit=50)
@project_fields(LogBrief)
def search_logs(query: str, level: str = "ERROR") -> list[dict[str, Any]]:
    """Search the logs."""
    return [{"id": 3, "time": "10-24 03:12", "level": level, "message": query}]


@summarize_with_handle(head=40, tail=10)
def run_command(command: str) -> str:
    """Run a shell command."""
    return command


@paginate
async def list_files(root: str) -> list[str]:
    """List files under root."""
    return [root]


@project_fields(["number", "user.login"])
def list_issues(repo: str) -> list[dict[str, Any]]:
    """List issues."""
    return []


@project_fields(["number"], deny=["user.email"], on_unreadable="text")
def issue_status(repo: str) -> str:
    """The status line of a repository (trusted text, shown under the opt-in)."""
    return "ok"


class IssueDetail(BaseModel):
    """What a handle keeps of an issue."""

    number: int
    body: str


@summarize_with_handle(key="number")
@project_fields(
    ["number", "title"], detail=IssueDetail, deny=["author.email"], response_format=True
)
def search_issues(
    query: str,
    tenant: Annotated[str, slimtools.Hidden] = "acme",
    token: Annotated[str, slimtools.Secret] = "",
) -> list[dict[str, Any]]:
    """Search issues for one tenant."""
    return []


def word_failure(exc: Exception) -> str:
    """An ``on_error`` hook."""
    return describe_error(exc) + " " + redact(str(exc))


guarded = Toolkit("guarded", on_error=word_failure)


def fetch_ticket(handle: str) -> Mapping[str, Any]:
    """Read one ticket live."""
    return {"id": handle}


@summarize_with_handle(key="id", fetch=fetch_ticket)
def list_tickets() -> list[dict[str, Any]]:
    """List tickets."""
    return []


class Service:
    """Tools as methods."""

    @paginate(limit=5)
    def search(self, query: str) -> list[int]:
        """Search this service."""
        return [1]


def use_results() -> None:
    """Envelopes and their parts are typed."""
    env = search_logs("timeout")
    assert_type(env, Envelope[Any])
    assert_type(env.total, int)
    assert_type(env.briefs, list[Any])
    assert_type(env.hint, str)
    assert_type(env.page, int | None)
    assert_type(env.as_dict(), dict[str, Any])
    assert_type(env.jsonable(), dict[str, Any])
    assert_type(str(run_command("make test")), str)
    assert_type(Service().search("x"), Envelope[Any])
    assert_type(list_issues("a/b"), Envelope[Any])
    assert_type(search_issues("bug", tenant="globex"), Envelope[Any])
    assert_type(list_tickets(), Envelope[Any])
    assert_type(kit.get_record(3), str)
    assert_type(kit.get_record("k3f9a2qd", source="search_logs", page=2), str)
    assert_type(slimtools.get_record(3), str)


async def use_async() -> None:
    """Async tools stay awaitable; the toolkit has async twins."""
    env = await list_files("/")
    assert_type(env, Envelope[Any])
    assert_type(await kit.aget_record(3), str)
    assert_type(await kit.acall("search_logs", {"query": "x"}), ToolResult)


def use_toolkit() -> None:
    """Tool specs and dispatch, as adapters use them."""
    specs = kit.tools
    assert_type(specs, list[ToolSpec])
    spec = kit.spec("search_logs")
    assert_type(spec.parameters, dict[str, Any])
    assert_type(spec.handle_key, str | None)
    result = kit.call("search_logs", '{"query": "timeout"}', session="alice")
    assert_type(result, ToolResult)
    assert_type(result.text, str)
    assert_type(result.is_error, bool)
    assert_type(kit.categories, dict[str, str | None])
    with slimtools.session("alice") as bound:
        assert_type(bound, str)
        assert_type(slimtools.current_session(), str | None)


def use_stores_and_helpers() -> None:
    """Stores satisfy the protocol; the helpers are plain functions."""
    store: HandleStore = MemoryStore()
    refused = store.put_many(Scope("logs", "alice"), {"r:search_logs:3": {"id": 3}})
    assert_type(store.get_many(Scope("logs"), ["r:search_logs:3"]), dict[str, Any])
    assert len(refused) == 0
    assert_type(count_tokens("日本語"), int)
    assert_type(clip_text("long text", 5), str)
    counter: TokenCounter = len
    assert counter("abc") == 3


def use_clearing_and_ledger(history: list[dict[str, Any]]) -> None:
    """Clearing, its report and the ledger, as a user's agent loop calls them."""
    policy = slimtools.ClearingPolicy(keep_turns=2, keep_head=200, retention={"create_issue": None})
    assert_type(slimtools.clear_stale_results(history, policy), list[Any])
    cleared, report = clear_with_report(history, policy)
    assert_type(report.cleared_tool_uses, int)
    clearer = slimtools.Clearer(slimtools.ClearingPolicy.for_toolkit(kit, keep=5))
    assert_type(clearer.clear(cleared), list[Any])
    assert_type(slimtools.ClearingPolicy.from_anthropic(), slimtools.ClearingPolicy)
    assert_type(tool_result_bill(20, 5_000), list[tuple[int, int, int]])
    assert_type(TokenLedger.measure(history, policy, cache="openai"), TokenLedger)
    assert_type(clearer.clear_in_place(cleared), ClearingReport)


def use_live_metrics() -> None:
    """Listening to events: per toolkit, per clearer, process-wide, and OpenTelemetry."""
    from slimtools.instrumentation import (
        ClearingPass,
        Event,
        RecordLookup,
        SlimmedCall,
        Subscription,
    )
    from slimtools.instrumentation.otel import OTelListener, instrument
    from slimtools.typing import Listener

    saved: list[int] = []

    def tally(event: Event) -> None:
        if isinstance(event, SlimmedCall):
            assert_type(event.tokens_saved, int)
            saved.append(event.tokens_saved)
        elif isinstance(event, ClearingPass):
            assert_type(event.first_changed, int | None)
        elif isinstance(event, RecordLookup):
            assert_type(event.found, bool)

    listener: Listener = tally
    listening = slimtools.Toolkit("metrics", on_event=listener)
    assert_type(listening.on_event, Listener | None)
    clearer = slimtools.Clearer(on_event=tally)
    with slimtools.observe(tally) as subscription:
        assert_type(subscription.active, bool)
        search_logs("timeout")
        clearer.clear([])
    assert_type(subscription, Subscription)
    with instrument(spans="never"):
        search_logs("timeout")
    assert_type(OTelListener(spans="always"), OTelListener)


def use_proxy_config_and_wrap() -> None:
    """A proxy config read as the proxy reads it, and a function slimmed with ``wrap``."""
    from slimtools.proxy import ProxyConfig, ToolOptions, parse_config

    config = parse_config('[tools.list_issues]\nfields = ["number", "title:80"]\nkey = "number"\n')
    assert_type(config, ProxyConfig)
    assert_type(config.options_for("list_issues"), ToolOptions | None)
    assert_type(config.max_tokens, int | None)

    def list_issues(repo: str) -> list[dict[str, Any]]:
        return [{"number": 1, "title": "crash", "body": "..."}]

    tool = slimtools.wrap(list_issues, fields=["number", "title"], key="number", limit=10)
    assert callable(tool)


def use_transcripts(folder: str) -> None:
    """Load, stream, clear and restore transcript files, as a user's script does."""
    from pathlib import Path

    from slimtools.transcripts import (
        FileClearing,
        Origin,
        Source,
        Transcript,
        TranscriptError,
        clear_file,
        detect_source,
        iter_transcripts,
        load_transcripts,
        restore_file,
    )

    errors: list[TranscriptError] = []
    for run in iter_transcripts(folder, on_error=errors.append):
        assert_type(run, Transcript)
        assert_type(run.source, Source)
        assert_type(run.origins, tuple[Origin, ...])
        assert_type(run.path, Path | None)
    assert_type(load_transcripts(folder, format="claude_code"), list[Transcript])
    assert_type(detect_source(folder), Source | None)
    done = clear_file("run.jsonl", "cleared.jsonl", slimtools.ClearingPolicy(), audit="a.jsonl")
    assert_type(done, FileClearing)
    assert_type(done.cleared, int)
    assert_type(restore_file("cleared.jsonl", "a.jsonl", "run.jsonl"), int)
    assert_type([e.line for e in errors], list[int | None])


def use_analysis(folder: str) -> None:
    """Analyse transcripts, stream one run and replay it, as a user's script does."""
    from slimtools.ledger.analyze import Analysis, Figures, analyze
    from slimtools.ledger.stream import RunFigures, RunReplay
    from slimtools.transcripts import RunStream, stream_file

    result = analyze(folder, policies={"turn-end": slimtools.ClearingPolicy(cache=None)})
    assert_type(result, Analysis)
    assert_type(result.total, Figures)
    assert_type(result.groups("source"), dict[str, Figures])
    assert_type(result.to_dict()["files"], Any)
    for run in stream_file(f"{folder}/session.jsonl"):
        assert_type(run, RunStream)
        figures = RunReplay(run.format, {"default": slimtools.ClearingPolicy()}).add_all(
            run.messages
        )
        assert_type(figures.finish(), RunFigures)
        assert_type(figures.finish().ledger("default"), TokenLedger)

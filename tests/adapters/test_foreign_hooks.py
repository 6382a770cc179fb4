"""HookSlimmer: the result an after-tool hook holds, slimmed by tool name as wrap() would."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import slimtools
from slimtools import Toolkit
from slimtools.errors import ConfigurationError
from slimtools.foreign import Raw
from slimtools.foreign.hooks import HookSlimmer
from tests._profile import examples

ISSUES = [
    {"number": n, "title": f"issue {n}", "email": f"u{n}@corp.example", "body": "x" * 300}
    for n in range(1, 31)
]
CONFIG = {"fields": ["number", "title"], "key": "number", "deny": ["email"]}


def text_raw(value: Any) -> Raw:
    """A text result as a framework hands it over (its text is its native form)."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return Raw(texts=[text], native=text)


def test_configured_tool_result_becomes_an_envelope_of_briefs() -> None:
    """A tool with fields shows briefs, and get_record expands one by its key."""
    hooks = HookSlimmer({"list_issues": CONFIG})
    result = hooks.slim("list_issues", {"repo": "o/r"}, text_raw(ISSUES))
    assert result is not None
    envelope = orjson.loads(result.text)
    assert envelope["total"] == 30
    assert envelope["briefs"][0] == {"number": 1, "title": "issue 1"}
    assert "issue 3" in hooks.toolkit.get_record(3)


def test_denied_value_never_reaches_the_envelope_or_the_record() -> None:
    """deny removes the path before briefs, handles and records see it."""
    hooks = HookSlimmer({"list_issues": CONFIG})
    result = hooks.slim("list_issues", {}, text_raw(ISSUES))
    assert result is not None
    assert "corp.example" not in result.text
    assert "corp.example" not in hooks.toolkit.get_record(3)


def test_unreadable_result_under_an_allowlist_is_withheld_with_a_note() -> None:
    """Free text the allowlist cannot project is withheld, never shown raw."""
    hooks = HookSlimmer({"list_issues": CONFIG})
    result = hooks.slim("list_issues", {}, text_raw("user u1@corp.example, token abc"))
    assert result is not None
    assert "corp.example" not in result.text
    assert "withheld" in result.text


def test_small_unconfigured_result_is_left_as_it_is() -> None:
    """An unconfigured tool within the budget needs no replacement: None."""
    assert HookSlimmer().slim("echo", {}, text_raw("hello")) is None


def test_oversized_unconfigured_result_becomes_an_envelope_with_a_handle() -> None:
    """Past the budget, an unconfigured tool's text shows its head and a handle."""
    hooks = HookSlimmer(max_tokens=100)
    text = "\n".join(f"line {n} of the build log" for n in range(500))
    result = hooks.slim("build", {}, text_raw(text))
    assert result is not None
    envelope = orjson.loads(result.text)
    assert envelope["total"] == 500
    assert "line 499" in hooks.toolkit.get_record(envelope["handle"], page=72)


def test_default_options_apply_to_every_unnamed_tool() -> None:
    """default= slims tools the table does not name; named tools keep their own."""
    hooks = HookSlimmer({"other": {"fields": ["title"]}}, default=CONFIG)
    result = hooks.slim("anything", {}, text_raw(ISSUES))
    assert result is not None
    assert orjson.loads(result.text)["briefs"][0] == {"number": 1, "title": "issue 1"}


def test_max_tokens_none_leaves_unconfigured_tools_untouched() -> None:
    """With no budget an unconfigured tool is never replaced, however large."""
    assert HookSlimmer(max_tokens=None).slim("big", {}, text_raw("x " * 100_000)) is None


def test_record_tool_results_are_never_slimmed_again() -> None:
    """get_record's own output passes: it is already bounded by the toolkit's pages."""
    hooks = HookSlimmer(default=CONFIG, max_tokens=10)
    assert hooks.slim("get_record", {"handle": 3}, text_raw("y" * 5000)) is None


@pytest.mark.parametrize("option", ["limit", "max_limit", "response_format"])
def test_paging_options_are_refused_with_the_reason(option: str) -> None:
    """A hook cannot add page/limit to the framework's tool: a clear error, not a silent no-op."""
    with pytest.raises(ConfigurationError, match="cannot apply in a hook"):
        HookSlimmer({"t": {option: 5}})


def test_unknown_option_is_named_with_its_tool() -> None:
    """A typo is a ConfigurationError naming the tool and the key."""
    with pytest.raises(ConfigurationError, match=r"'t'.*feilds"):
        HookSlimmer({"t": {"feilds": ["a"]}})


def test_parallel_calls_each_slim_their_own_result() -> None:
    """Concurrent hooks never see each other's result (one pending result per context)."""
    hooks = HookSlimmer({"list_issues": CONFIG})

    async def one(n: int) -> str:
        rows = [{**ISSUES[0], "number": n, "title": f"only {n}"}]
        found = await hooks.aslim("list_issues", {"n": n}, text_raw(rows))
        assert found is not None
        return found.text

    async def run() -> list[str]:
        return await asyncio.gather(*(one(n) for n in range(20)))

    for n, text in enumerate(asyncio.run(run())):
        assert orjson.loads(text)["briefs"] == [{"number": n, "title": f"only {n}"}]


def test_calling_the_registered_tool_outside_a_hook_is_an_error_result() -> None:
    """The toolkit's entry for a hooked tool has nothing to slim when called directly."""
    hooks = HookSlimmer({"list_issues": CONFIG})
    hooks.slim("list_issues", {}, text_raw(ISSUES))
    assert hooks.toolkit.call("list_issues", {}).is_error


@settings(max_examples=examples(60), deadline=None)
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
def test_hook_briefs_agree_with_wrap_and_never_hold_denied_values(rows: list[Any]) -> None:
    """The hook shows the briefs wrap() shows for the same result, and no denied value."""
    options = {"fields": ["id", "name"], "key": "id", "deny": ["secret"]}
    hooks = HookSlimmer({"find": options})
    hooked = hooks.slim("find", {}, text_raw(rows))
    assert hooked is not None

    def find() -> list[dict[str, Any]]:
        return rows

    wrapped = slimtools.wrap(find, toolkit=Toolkit("wrapped"), **options)
    assert orjson.loads(hooked.text)["briefs"] == wrapped().briefs
    for row in rows:
        assert row["secret"] not in hooked.text

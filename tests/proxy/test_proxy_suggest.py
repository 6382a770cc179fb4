"""``slimtools suggest``: a proposed allowlist from samples, valid, with its measured ratio."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools import ConfigurationError
from slimtools.cli import main
from slimtools.proxy.autobrief import unmatched_fields, warn_unmatched
from slimtools.proxy.config import parse_config
from slimtools.proxy.suggest import render, suggest
from tests._shared import shared_data

ISSUE = {
    "id": 1,
    "node_id": "MDU6SXNzdWUx",
    "number": 7,
    "title": "Crash on start",
    "state": "open",
    "url": "https://api.github.com/repos/o/r/issues/7",
    "comments_url": "https://api.github.com/repos/o/r/issues/7/comments",
    "user": {"login": "ana", "id": 9, "avatar_url": "https://a/u", "node_id": "x"},
    "labels": [{"name": "bug", "color": "f00", "url": "u"}],
    "created_at": "2024-01-01T00:00:00Z",
    "comments": 3,
    "body": "trace " * 100,
    "author_association": "NONE",
}


def _issues(n: int = 12) -> list[dict]:
    return [{**ISSUE, "id": i, "number": 100 + i} for i in range(n)]


def test_keeps_ids_names_states_dates_counts_and_drops_the_rest():
    """URLs and node ids go, the user object shrinks to its login, the body is clipped."""
    found = suggest([_issues()], tool="list_issues")
    assert found.fields == [
        "id",
        "number",
        "title",
        "state",
        "user = user.login",
        "labels.name",
        "created_at",
        "comments",
        "body:160",
    ]
    assert found.key == "id"
    assert "url" in found.dropped["URL templates"]
    assert found.dropped["node ids"] == ["node_id"]
    assert "author_association" in found.dropped["other fields"]


def test_picks_the_list_path_inside_a_dict():
    """A search result's ``items`` list is found and named as ``items``."""
    found = suggest([{"total_count": 12, "incomplete": False, "items": _issues()}])
    assert found.items == "items"
    assert found.records == 12


def test_the_block_is_a_valid_config_and_its_ratio_is_measured():
    """The printed block parses as a proxy config; the ratio comes from running it."""
    found = suggest([_issues(30)], tool="list_issues")
    text = render(found)
    config = parse_config(text, "suggested.toml")
    assert config.options_for("list_issues").key == "id"
    assert found.raw_tokens > 5 * found.envelope_tokens
    assert "x smaller" in text


def test_the_model_form_is_python_that_defines_the_brief():
    """``--format model`` prints a Pydantic model that compiles and allowlists the fields."""
    code = render(suggest([_issues()], tool="list_issues"), fmt="model")
    namespace: dict = {}
    exec(compile(code, "<suggested>", "exec"), namespace)
    model = namespace["ListIssuesBrief"]
    assert {"id", "title", "user", "body"} <= set(model.model_fields)


def test_samples_without_records_are_a_configuration_error():
    """A sample of scalars has nothing to allowlist."""
    with pytest.raises(ConfigurationError, match="no sample"):
        suggest([[1, 2, 3]])


@pytest.mark.shared
def test_on_recorded_github_issues_the_suggestion_is_over_20x_smaller(capsys):
    """The CLI on a real 30-issue response prints a block at least 20x smaller than raw."""
    sample = shared_data() / "payloads" / "github_pygithub" / "145.json"
    assert main(["suggest", str(sample), "--tool", "list_issues"]) == 0
    out = capsys.readouterr().out
    ratio = float(re.search(r"\(([\d.]+)x smaller\)", out).group(1))
    assert ratio > 20
    assert "[tools.list_issues]" in out
    assert json.loads(sample.read_text())[0]["node_id"] not in out


def test_a_text_sample_gets_a_block_that_pages_it_by_lines():
    """Text results are paged: the block sets lines per page for pages of a few thousand tokens."""
    text = "".join(f"diff line {i} with some content here\n" for i in range(3_000))
    found = suggest([text], tool="git_diff")
    assert found.fields == []
    assert 200 <= found.limit <= 1_000
    config = parse_config(render(found), "suggested.toml")
    assert config.options_for("git_diff").limit == found.limit
    assert "lines of text: paged by lines" in render(found)


def test_a_dict_of_several_lists_keeps_fields_of_each():
    """A memory graph keeps its entities' names and kinds and its relations' ends and kinds."""
    graph = {
        "entities": [
            {"type": "entity", "name": f"p{i}", "entityType": "person", "observations": ["x"]}
            for i in range(20)
        ],
        "relations": [
            {"type": "relation", "from": f"p{i}", "to": f"p{i + 1}", "relationType": "knows"}
            for i in range(19)
        ],
    }
    found = suggest([graph], tool="read_graph")
    assert found.items is None
    assert {"entities.name", "entities.entityType", "relations.from", "relations.to"} <= set(
        found.fields
    )
    assert "relations.relationType" in found.fields


def test_short_type_fields_are_kept():
    """``directory_tree``'s ``type`` (file or directory) stays in the brief."""
    tree = [{"name": f"n{i}", "type": "directory" if i % 2 else "file"} for i in range(10)]
    assert suggest([tree], tool="directory_tree").fields == ["name", "type"]


def test_a_config_whose_fields_match_no_record_key_is_warned_once(caplog):
    """A configured tool whose fields name no key of its records is logged, once."""
    options = parse_config('[tools.t]\nfields = ["nmae"]', "c.toml").options_for("t")
    warned: set[str] = set()
    with caplog.at_level("WARNING", logger="slimtools.proxy"):
        warn_unmatched("t", options, [{"name": "a", "id": 1}], warned)
        warn_unmatched("t", options, [{"name": "a", "id": 1}], warned)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    assert "[tools.t] fields match no key" in messages[0]
    assert "name, id" in messages[0]


def test_a_config_whose_fields_match_stays_quiet(caplog):
    """No warning when one configured field is a key of the records."""
    options = parse_config('[tools.t]\nfields = ["name", "nope"]', "c.toml").options_for("t")
    with caplog.at_level("WARNING", logger="slimtools.proxy"):
        warn_unmatched("t", options, {"items": [{"name": "a"}]}, set())
    assert not caplog.records


_KEYS = st.sampled_from(["id", "name", "state", "user", "title"])


@given(
    st.lists(st.one_of(st.dictionaries(_KEYS, st.none(), max_size=4), st.none()), max_size=60),
    st.lists(_KEYS, min_size=1, max_size=3, unique=True),
)
def test_unmatched_fields_are_the_keys_of_the_first_fifty_records_when_none_matches(
    records, fields
):
    """Stopping at the first matching record gives what gathering all 50 records' keys gives."""
    config = "[tools.t]\nfields = [" + ", ".join(f'"{f}"' for f in fields) + "]"
    options = parse_config(config, "c.toml").options_for("t")
    keys: dict[str, None] = {}
    for record in records[:50]:
        if isinstance(record, dict):
            keys.update(dict.fromkeys(record))
    expected = None if not keys or any(f in keys for f in fields) else list(keys)
    assert unmatched_fields(options, records) == expected

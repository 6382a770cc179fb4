"""slimtools.testing: a clean default toolkit, and a store suite that reports what breaks."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import slimtools
import slimtools.testing
from slimtools import summarize_with_handle
from slimtools.stores.memory import MemoryStore
from slimtools.testing import StoreConformance, reset_defaults
from slimtools.typing import HandleStore, Scope


def test_reset_defaults_forgets_what_unregistered_tools_stored():
    """After reset_defaults, handles of tools outside any toolkit read as unknown."""

    @summarize_with_handle(key="id")
    def loose(query: str) -> list[dict[str, Any]]:
        return [{"id": 7, "body": "kept"}]

    loose("q")
    assert json.loads(slimtools.get_record(7)) == {"id": 7, "body": "kept"}
    reset_defaults()
    assert slimtools.get_record(7).startswith('No record for handle "7"')
    loose("q")
    assert json.loads(slimtools.get_record(7)) == {"id": 7, "body": "kept"}


def test_the_testing_module_imports_no_test_framework():
    """slimtools.testing runs under pytest or unittest alike: it imports neither pytest nor
    hypothesis."""
    imported = set()
    for path in Path(slimtools.testing.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
    assert "slimtools" in imported
    assert imported.isdisjoint({"pytest", "hypothesis", "unittest"})


def test_a_suite_without_make_store_says_so() -> None:
    """A subclass that forgot make_store is told which hook is missing."""

    class TestIncomplete(StoreConformance):
        pass

    with pytest.raises(NotImplementedError, match="TestIncomplete must implement make_store"):
        TestIncomplete().test_put_then_get_round_trips()


def test_a_suite_without_break_store_says_so() -> None:
    """A subclass that forgot break_store is told which hook is missing."""

    class TestIncomplete(StoreConformance):
        def make_store(self, **options: Any) -> HandleStore:
            return MemoryStore()

    with pytest.raises(NotImplementedError, match="TestIncomplete must implement break_store"):
        TestIncomplete().test_any_inner_error_surfaces_as_store_unavailable()


def test_a_store_that_breaks_a_rule_fails_the_suite_with_a_message() -> None:
    """A store that forgets sessions fails the isolation check, naming what it read."""

    class Leaky(MemoryStore):
        def get_many(self, scope: Scope, keys: Any) -> dict[str, Any]:
            return super().get_many(Scope("kit", "alice"), keys)

    class TestLeaky(StoreConformance):
        def make_store(self, **options: Any) -> HandleStore:
            return Leaky()

    with pytest.raises(AssertionError, match=r"read from Scope\(toolkit='kit', session='bob'\)"):
        TestLeaky().test_other_session_lookup_looks_exactly_like_unknown()

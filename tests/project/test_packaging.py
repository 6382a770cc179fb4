"""Packaging: ``import slimtools`` is light, typed, and exports a tidy public API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import slimtools

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "mcp", "openai", "anthropic")
FRAMEWORKS += ("pydantic_ai", "agents", "google", "strands", "redis")
FRAMEWORKS += ("rich", "matplotlib")  # the cli extra: tables and plots only
FRAMEWORKS += ("opentelemetry",)  # the otel extra: only slimtools.instrumentation.otel imports it
FRAMEWORKS += ("starlette", "uvicorn", "httpx", "litellm")  # the gateway and litellm extras

PROBE = """
import json, sys
import slimtools
print(json.dumps(sorted(name.split(".")[0] for name in sys.modules)))
"""


def _modules_after_import() -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return set(json.loads(out.stdout))


@pytest.mark.subprocess
def test_importing_slimtools_pulls_in_no_framework():
    """LangChain, LangGraph, MCP, OpenAI, Anthropic, Pydantic AI, Agents SDK, Redis, the cli
    extra's rich and matplotlib, and OpenTelemetry stay out."""
    assert _modules_after_import().isdisjoint(FRAMEWORKS)


@pytest.mark.subprocess
def test_importing_slimtools_needs_only_pydantic_wrapt_and_orjson():
    """The third-party top-level modules loaded are the three dependencies (and their own)."""
    loaded = _modules_after_import()
    assert {"pydantic", "wrapt", "orjson"} <= loaded
    public = {name for name in loaded if not name.startswith("_")}  # _sysconfigdata..., _cffi
    stdlib = set(sys.stdlib_module_names) | {"sitecustomize"}
    allowed = {"slimtools", "pydantic", "pydantic_core", "wrapt", "orjson", "typing_extensions"}
    allowed |= {"annotated_types", "typing_inspection"}  # pydantic's own dependencies
    assert public - stdlib - allowed == set()


def test_all_is_sorted_and_every_name_is_exported():
    """``__all__`` is sorted and each name in it exists."""
    assert slimtools.__all__ == sorted(slimtools.__all__)
    for name in slimtools.__all__:
        assert hasattr(slimtools, name), name


def test_the_package_is_marked_typed():
    """``py.typed`` ships with the package so type checkers use its hints."""
    assert (Path(slimtools.__file__).parent / "py.typed").is_file()


@pytest.mark.subprocess
def test_the_typed_api_example_runs():
    """``tests/typing/api.py`` (checked by mypy) also runs: the API it types is the real one.

    It runs in its own interpreter: its module-level tools (one with a live ``fetch=``) would
    otherwise stay sources of ``slimtools.get_record`` for later tests in this process.
    """
    script = Path(__file__).resolve().parents[1] / "typing" / "api.py"
    probe = (
        "import asyncio, runpy, sys\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "ns['use_results'](); asyncio.run(ns['use_async']()); ns['use_toolkit']()\n"
        "ns['use_stores_and_helpers'](); ns['use_live_metrics']()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, str(script)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert run.returncode == 0, run.stderr

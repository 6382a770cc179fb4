"""The foreign-tool rules: one package, framework adapters declared by a table and a Protocol."""

from __future__ import annotations

import importlib
import subprocess
import sys
import typing

import pytest

from slimtools._core.params import CONTEXT, HIDDEN, role
from slimtools._frameworks import FRAMEWORKS, loaded_adapters
from slimtools.foreign import WrapAdapter, adapter_for

MEMBERS = sorted(
    {*WrapAdapter.__annotations__, *(n for n in vars(WrapAdapter) if not n.startswith("_"))}
)
"""What the ``WrapAdapter`` Protocol declares: the module-level names each adapter has."""


@pytest.mark.parametrize("module", [row[1] for row in FRAMEWORKS])
def test_every_framework_row_names_a_module_with_the_adapter_members(module: str) -> None:
    """Each row's module declares every member of ``WrapAdapter``."""
    adapter = importlib.import_module(module)
    missing = [m for m in MEMBERS if not hasattr(adapter, m)]
    assert "accepts" in MEMBERS
    assert missing == []


def test_adapter_for_a_plain_function_is_none() -> None:
    """A plain callable belongs to no framework: ``wrap()`` slims it as a function."""
    assert adapter_for(len) is None


def test_adapter_for_a_langchain_tool_is_the_langchain_module() -> None:
    """A LangChain tool is claimed by the LangChain row's module."""
    from langchain_core.tools import tool

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    found = adapter_for(echo)
    assert found is importlib.import_module("slimtools.adapters._wrap_langchain")


def test_framework_context_classes_come_from_the_adapter_modules() -> None:
    """The core finds a framework's injected context through the adapter table."""
    from pydantic_ai import RunContext

    list(loaded_adapters())
    assert role(RunContext[None]) == CONTEXT


def test_a_framework_hidden_annotation_comes_from_the_adapter_modules() -> None:
    """LangChain's ``InjectedToolArg`` hides a parameter, as its adapter module declares."""
    from langchain_core.tools import InjectedToolArg

    assert role(typing.Annotated[str, InjectedToolArg]) == HIDDEN


@pytest.mark.subprocess
def test_import_slimtools_loads_no_proxy_framework_or_toml_module() -> None:
    """``import slimtools`` loads neither the proxy, a framework, the MCP SDK nor tomllib."""
    code = (
        "import slimtools, sys; print(' '.join(sorted(m for m in sys.modules if "
        "m.startswith(('slimtools.proxy', 'slimtools.adapters', 'tomllib', 'langchain_core', "
        "'agents', 'pydantic_ai', 'mcp')))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == []

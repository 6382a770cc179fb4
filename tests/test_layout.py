"""The slimming core's import graph: no cycle through the toolkit or ``slimtools._core``.

The graph is read from the source (every ``import`` except those under
``if TYPE_CHECKING:``, function-level imports included, since a lazy import that closes a
loop is still a cycle), so the check does not depend on which module happens to be imported
first.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import slimtools

PACKAGE = Path(slimtools.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The slimtools modules ``module`` imports at run time (module or function level)."""
    found: set[str] = set()
    base = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("slimtools"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                target = f"{anchor}.{node.module}" if node.module else anchor
            else:
                target = node.module or ""
            if target.startswith("slimtools"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, set[str]]:
    """Every slimtools module and the slimtools modules it imports."""
    sources = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = _imports(tree, name, path.name == "__init__.py")
        graph[name] = {t for t in targets if t in sources and t != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _is_core(module: str) -> bool:
    return module == "slimtools.toolkit" or module.startswith("slimtools._core")


def test_the_import_graph_reader_sees_a_lazy_import_cycle():
    """A function-level import that closes a loop counts; one under TYPE_CHECKING does not."""
    lazy = ast.parse("def f():\n    from slimtools.b import x\n")
    typed = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import slimtools.b\n"
    )
    graph = {
        "slimtools.a": _imports(lazy, "slimtools.a", False) & {"slimtools.b"},
        "slimtools.b": {"slimtools.a"},
    }
    assert _cycles(graph) == [{"slimtools.a", "slimtools.b"}]
    assert _imports(typed, "slimtools.a", False) == set()


def test_no_import_cycle_runs_through_the_toolkit_or_the_core():
    """No cycle of imports includes slimtools.toolkit or a slimtools._core module."""
    through_core = [sorted(c) for c in _cycles(_graph()) if any(_is_core(m) for m in c)]
    assert through_core == []


def test_the_core_never_imports_the_toolkit():
    """The engine modules reach a toolkit only as data: none of them imports slimtools.toolkit."""
    graph = _graph()
    importers = sorted(m for m, targets in graph.items() if "slimtools.toolkit" in targets)
    assert [m for m in importers if m.startswith("slimtools._core")] == []


CORE_MODULES = sorted(m for m in _graph() if _is_core(m) and m != "slimtools._core")


@pytest.mark.subprocess
def test_every_core_module_imports_first_in_a_fresh_interpreter():
    """Each core module imports on its own in a new interpreter (``python -X importtime``)."""
    failed = {}
    for module in CORE_MODULES:
        run = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            failed[module] = run.stderr.strip().splitlines()[-1]
    assert failed == {}

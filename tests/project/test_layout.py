"""The package's shape, as ARCHITECTURE.md states it: layers, private modules, no cycles.

The import graph is read from the source: every ``import``, function-level ones included (a
lazy import that closes a loop is still a cycle). The cycle check reads imports under ``if
TYPE_CHECKING:`` too, since a type-level cycle is a design cycle even when it never runs;
the layer table is read from ARCHITECTURE.md itself, so the document and the check cannot
drift apart.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import slimtools

PACKAGE = Path(slimtools.__file__).resolve().parent
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
FACES = {"slimtools", "slimtools.typing", "slimtools.__main__"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool, *, typing: bool) -> set[str]:
    """The slimtools modules ``module`` imports (with ``typing``: under TYPE_CHECKING too)."""
    found: set[str] = set()
    base = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
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


@cache
def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


@cache
def _graph(*, typing: bool = True) -> dict[str, frozenset[str]]:
    """Every slimtools module and the slimtools modules it imports."""
    sources = _sources()
    graph = {}
    for name, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = _imports(tree, name, path.name == "__init__.py", typing=typing)
        graph[name] = frozenset(t for t in targets if t in sources and t != name)
    return graph


def _cycles(graph: dict[str, frozenset[str]]) -> list[set[str]]:
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


@cache
def _layers() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """ARCHITECTURE.md's layer table, bottom first: (layer, the module prefixes it holds)."""
    rows = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`slimtools"):
            rows.append((cells[0], tuple(re.findall(r"`(slimtools[\w.]*)`", cells[1]))))
    return tuple(rows)


def _layer_of(module: str) -> int:
    """The position of ``module``'s layer in the table (its longest listed prefix)."""
    best, depth = -1, -1
    for position, (_, prefixes) in enumerate(_layers()):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = position, len(prefix)
    return best


def _package_of(module: str) -> str:
    return module if _sources()[module].name == "__init__.py" else module.rpartition(".")[0]


def _may_import(importer: str, target: str) -> bool:
    """Whether ``importer`` may import ``target`` under the private-module rule."""
    parts = target.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if not part.startswith("_") or part.startswith("__"):
            continue
        owner = ".".join(parts[:i])
        if owner == "slimtools" and not (PACKAGE / part).is_dir():
            return True  # a leaf module at the root: shared by every package
        if owner == "slimtools":  # slimtools._core: the engine of the root modules
            inside = ".".join(parts[: i + 1])
            return _package_of(importer) == "slimtools" or importer.startswith(inside)
        return importer == owner or importer.startswith(owner + ".")
    return True


def test_the_layer_table_is_read_from_architecture_md():
    """The table lists five layers from leaf to lab, each with its modules."""
    assert [name for name, _ in _layers()] == ["leaf", "core", "clearing", "edges", "lab"]
    assert all(prefixes for _, prefixes in _layers())


def test_every_module_belongs_to_exactly_one_layer_or_is_a_face():
    """Each module of the package is named (or has its package named) in the layer table."""
    unplaced = sorted(m for m in _sources() if m not in FACES and _layer_of(m) < 0)
    assert unplaced == []


def test_imports_never_go_up_the_layers():
    """A module imports only from its own layer and the layers below it."""
    upward = sorted(
        (module, target)
        for module, targets in _graph().items()
        if module not in FACES
        for target in targets
        if target not in FACES and _layer_of(target) > _layer_of(module)
    )
    assert upward == []


def test_no_import_cycle_at_run_time_or_for_type_checking():
    """No cycle of imports anywhere in the package, TYPE_CHECKING imports included."""
    assert [sorted(c) for c in _cycles(_graph())] == []


def test_no_module_imports_another_packages_private_module():
    """A ``_name`` module is imported only inside its package; root leaves are shared."""
    reaches = sorted(
        (module, target)
        for module, targets in _graph().items()
        for target in targets
        if not _may_import(module, target)
    )
    assert reaches == []


def test_the_leaf_modules_import_nothing_from_slimtools():
    """The root leaf modules depend on nothing of the package, so anything may use them."""
    leaves = _layers()[0][1]
    assert {leaf: set(_graph()[leaf]) for leaf in leaves} == {leaf: set() for leaf in leaves}


def test_the_private_module_rule_reads_as_stated():
    """Sibling and subpackage modules may use a package's private module; others may not."""
    assert _may_import("slimtools.clearing.policy", "slimtools.clearing._engine")
    assert _may_import("slimtools.clearing.formats.view", "slimtools.clearing._engine")
    assert not _may_import("slimtools.ledger.stream", "slimtools.clearing._engine")
    assert not _may_import("slimtools.clearing._batch", "slimtools.clearing.formats._objects")
    assert _may_import("slimtools.ledger.stream", "slimtools._json")
    assert _may_import("slimtools.toolkit", "slimtools._core.pipeline")
    assert not _may_import("slimtools.proxy.server", "slimtools._core.pipeline")


def test_the_import_graph_reader_sees_a_lazy_import_cycle():
    """A function-level import that closes a loop counts; TYPE_CHECKING ones count for types."""
    lazy = ast.parse("def f():\n    from slimtools.b import x\n")
    typed = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import slimtools.b\n"
    )
    graph = {
        "slimtools.a": frozenset(_imports(lazy, "slimtools.a", False, typing=False))
        & {"slimtools.b"},
        "slimtools.b": frozenset({"slimtools.a"}),
    }
    assert _cycles(graph) == [{"slimtools.a", "slimtools.b"}]
    assert _imports(typed, "slimtools.a", False, typing=False) == set()
    assert _imports(typed, "slimtools.a", False, typing=True) == {"slimtools.b"}


KEPT_OUT = (
    "slimtools.proxy",
    "slimtools.gateway",
    "slimtools.integrations",
    "slimtools.adapters",
    "slimtools.transcripts",
    "slimtools.ledger",
    "slimtools.eval",
    "slimtools.cli",
)
FRAMEWORKS = (
    "langchain_core",
    "langgraph",
    "mcp",
    "openai",
    "anthropic",
    "pydantic_ai",
    "agents",
    "google",
    "strands",
    "redis",
    "starlette",
    "uvicorn",
    "httpx",
    "litellm",
    "tomllib",
    "tomli",
)


@pytest.mark.subprocess
def test_import_slimtools_loads_no_edge_lab_or_framework_module():
    """``import slimtools`` loads the core and clearing only: no proxy, lab or framework."""
    probe = "import sys, slimtools; print('\\n'.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split())
    kept_out = [m for m in loaded if any(m == p or m.startswith(p + ".") for p in KEPT_OUT)]
    assert sorted(kept_out) == []
    assert sorted(m for m in loaded if m.split(".")[0] in FRAMEWORKS) == []


CORE_MODULES = sorted(m for m in _sources() if _layer_of(m) in (0, 1))


@pytest.mark.subprocess
def test_every_core_module_imports_first_in_a_fresh_interpreter():
    """Each leaf and core module imports on its own in a new interpreter."""
    failed = {}
    for module in CORE_MODULES:
        run = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            failed[module] = run.stderr.strip().splitlines()[-1]
    assert failed == {}


def test_no_module_is_over_450_lines():
    """Small modules: a module that needs a table of contents is split."""
    long = {m: n for m, p in _sources().items() if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}


def test_no_function_is_over_65_lines():
    """Functions split where they split naturally (a codec's decoder is the longest, at 64)."""
    long = []
    for module, path in _sources().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 65:
                    long.append((module, node.name, length))
    assert long == []


def test_the_package_never_imports_the_benchmarks_or_the_tests():
    """What only measures the package (benchmarks/, the peers there) or tests it stays out of
    an install: no module of slimtools imports either, at any level."""
    outside = ("benchmarks", "tests")
    for name, path in _sources().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            assert not [t for t in targets if t.split(".")[0] in outside], name

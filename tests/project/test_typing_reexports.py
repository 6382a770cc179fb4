"""``slimtools.typing`` only re-exports: each protocol lives beside its data."""

from __future__ import annotations

import ast
from pathlib import Path

import slimtools
import slimtools.typing

PACKAGE = Path(slimtools.__file__).resolve().parent


def test_typing_defines_nothing_of_its_own():
    """The typing module holds imports and ``__all__`` only, no class or alias of its own."""
    tree = ast.parse((PACKAGE / "typing.py").read_text(encoding="utf-8"))
    own = [
        node
        for node in tree.body
        if not isinstance(node, (ast.ImportFrom, ast.Import, ast.Expr))
        and not (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__")
    ]
    assert own == []


def test_no_slimtools_module_imports_typing():
    """Inside the package, every module imports a protocol from its owner, not from typing."""
    importers = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "slimtools.typing"
    ]
    assert importers == []


def test_each_protocol_is_defined_beside_its_data():
    """The store, audit and event protocols come from the modules that own their data."""
    assert slimtools.typing.HandleStore.__module__ == "slimtools.stores.base"
    assert slimtools.typing.Scope.__module__ == "slimtools.stores.base"
    assert slimtools.typing.Audit.__module__ == "slimtools.clearing.audit"
    assert slimtools.typing.DEFAULT_SESSION == "default"

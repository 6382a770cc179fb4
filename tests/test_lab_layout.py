"""The measurement lab (transcripts, ledger, eval, cli) reaches other packages by public names."""

from __future__ import annotations

from tests.test_layout import _cycles, _graph

LAB = ("slimtools.transcripts", "slimtools.ledger", "slimtools.eval", "slimtools.cli")

# Imports other work in this wave removes: the shared JSON helpers' move out of ``_core``,
# the ledger's tracks on the engine's public replay, and the proxy's ``serve`` for the CLI.
PENDING = {
    ("slimtools.cli.proxy", "slimtools.proxy._payload"),
    ("slimtools.eval.models", "slimtools._core.jsonenc"),
    ("slimtools.eval.scenario_files", "slimtools._core.jsonenc"),
    ("slimtools.eval.scenarios", "slimtools._core.jsonenc"),
    ("slimtools.ledger._tracks", "slimtools.clearing._batch"),
    ("slimtools.ledger._tracks", "slimtools.clearing._render"),
    ("slimtools.transcripts._audit", "slimtools._core.jsonenc"),
}


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def _private_reaches() -> set[tuple[str, str]]:
    graph = _graph()
    return {
        (module, target)
        for module, targets in graph.items()
        if module.startswith(LAB)
        for target in targets
        if _package(target) != _package(module)
        and any(part.startswith("_") for part in target.split(".")[1:])
    }


def test_the_lab_imports_no_new_private_module_of_another_package():
    """No lab module imports another package's private module beyond the pending few."""
    assert _private_reaches() - PENDING == set()


def test_no_import_cycle_runs_through_the_lab():
    """No cycle of imports includes a module of the lab (``eval.recall`` and ``eval`` once did)."""
    assert [sorted(c) for c in _cycles(_graph()) if any(m.startswith(LAB) for m in c)] == []

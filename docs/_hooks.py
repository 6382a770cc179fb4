"""MkDocs hooks for the slimtools docs (``hooks:`` in mkdocs.yml).

Pages other branches are still writing are listed in the nav but optional: an entry in
:data:`OPTIONAL` whose file does not exist yet is dropped, so ``mkdocs build --strict``
passes before every page has landed, and each page appears as soon as its file does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

OPTIONAL = frozenset(
    {"allowlist.md", "proxy.md", "proxy-config.md", "gateway.md", "clearing.md", "ledger.md"}
)


def _keep(entry: Any, docs: Path) -> Any:
    """The nav entry without missing optional pages (None: nothing left of it)."""
    if isinstance(entry, str):
        return None if entry in OPTIONAL and not (docs / entry).is_file() else entry
    if isinstance(entry, dict):
        kept = {title: _keep(value, docs) for title, value in entry.items()}
        kept = {title: value for title, value in kept.items() if value not in (None, [])}
        return kept or None
    if isinstance(entry, list):
        return [k for k in (_keep(e, docs) for e in entry) if k is not None]
    return entry


def on_config(config: Any) -> Any:
    """Drop the nav entries of optional pages whose files are not there."""
    docs = Path(config["docs_dir"])
    if config.get("nav"):
        config["nav"] = _keep(config["nav"], docs)
    return config

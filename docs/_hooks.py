"""MkDocs hooks for the slimtools docs (``hooks:`` in mkdocs.yml).

Pages other branches are still writing are listed in the nav but optional: an entry in
:data:`OPTIONAL` whose file does not exist yet is dropped, and a link to it in a page is
shown as its plain text, so ``mkdocs build --strict`` passes before every page has landed,
and each page (and every link to it) appears as soon as its file does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

OPTIONAL = frozenset(
    {
        "allowlist.md",
        "proxy.md",
        "proxy-config.md",
        "proxy-paging.md",
        "gateway.md",
        "clearing.md",
        "ledger.md",
    }
)
_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<target>[\w./-]+\.md)(?P<anchor>#[^)\s]*)?\)")


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


def unlink_missing(markdown: str, docs: Path) -> str:
    """``markdown`` with links to missing optional pages turned into their plain text."""

    def keep(match: re.Match[str]) -> str:
        target = match["target"]
        if Path(target).name in OPTIONAL and not (docs / target).is_file():
            return match["text"]
        return match[0]

    return _LINK.sub(keep, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Show links to optional pages that do not exist yet as plain text."""
    return unlink_missing(markdown, Path(config["docs_dir"]))

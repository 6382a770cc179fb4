"""Text measures shared by the slimming pipeline and the proxy (a leaf: no slimtools imports)."""

from __future__ import annotations

__all__ = ["line_count"]


def line_count(text: str) -> int:
    """Lines as a file reader counts them: a final newline ends the last line."""
    if not text:
        return 0
    return text.count("\n") + (not text.endswith("\n"))

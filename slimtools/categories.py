"""Tool categories: what a tool's name says about it, and which tools are safe to call again.

A category sets a tool's retention (``ClearingPolicy.retention``) and whether a placeholder
may offer to repeat the call. Declared categories win; otherwise the words of the name tell
(``read_file`` reads, ``run_query`` runs a command).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from slimtools._fields import field_of

EFFECT_VERBS = frozenset(
    {"charge", "pay", "refund", "bill", "transfer", "buy", "purchase", "cancel", "spend"}
    | {"clear", "purge", "wipe", "erase", "drop", "truncate", "reset", "destroy", "prune"}
    | {"kill", "terminate", "shutdown", "reboot", "restart", "deploy", "trigger", "invoke"}
    | {"rotate", "revoke", "renew", "refresh", "grant", "approve", "reject", "assign"}
    | {"mark", "publish", "submit", "notify", "invite", "reopen", "enable", "disable"}
    | {"unlock", "acquire", "claim", "reserve", "ack", "acknowledge", "install", "uninstall"}
    | {"pop", "dequeue", "consume", "take", "next", "increment", "incr", "decrement", "bump"}
    | {"set", "upsert", "lock"}
)
"""Name words that change something (besides the write verbs): a name holding one of them
is never offered again, whatever verb it starts with (``get_token_and_rotate``). Queue
words (``next``, ``pop``, ``take``) count: getting the next job twice takes two jobs; so
does ``set`` (``get_set``, Redis' GETSET, writes)."""

CATEGORY_VERBS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "write": frozenset(
            {"create", "update", "delete", "write", "commit", "post", "send", "edit", "put"}
            | {"patch", "insert", "remove", "save", "upload", "editor", "replace", "apply"}
            | {"modify", "rename", "move", "append"}
            | EFFECT_VERBS
        ),
        "command": frozenset(
            {"bash", "run", "exec", "execute", "shell", "command", "tail", "sh", "terminal"}
            | {"ipython", "computer", "browser", "click", "navigate"}
        ),
        "read": frozenset({"read", "get", "fetch", "open", "cat", "load", "show", "view"}),
        "search": frozenset({"search", "list", "find", "browse", "query", "grep", "ls", "lookup"}),
    }
)
"""Name words that imply a category; the first category listed here wins. Tools with effects
come first (write is kept longest, so ``fetch_and_update`` errs on the side of keeping, and
``run_query`` is a command): agents' own tools are recognised too (``str_replace_editor``,
``edit_file`` and ``apply_patch`` write; ``run_ipython``, ``execute_bash``, ``computer`` and
``browser`` are commands)."""

CATEGORIES = frozenset({"search", "read", "command", "write", "input"})
"""The retention categories a tool may declare (``Toolkit.tool(category=...)``,
``ClearingPolicy(categories=...)``; a policy's ``retention`` may add its own)."""

REPEATABLE_CATEGORIES = frozenset({"search", "read"})
"""Categories whose tools only read, so a placeholder may tell the model to call them again."""

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CONNECTORS = frozenset({"and", "then", "or", "plus", "also"})
"""Words that join two actions in one name: the word after one is the next action's verb."""


def _words(tool: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(tool)]


def infer_category(tool: str) -> str | None:
    """The category a tool's name implies (``"read_file"`` -> ``"read"``), or None."""
    words = set(_words(tool))
    for category, verbs in CATEGORY_VERBS.items():
        if words & verbs:
            return category
    return None


def repeatable_by_name(tool: str) -> bool | None:
    """Whether a tool's name alone says calling it again is safe: True only when every
    action in the name is a read (``get_user``, ``list_and_read_files``), False when any
    word changes something (``read_and_clear_inbox``, ``get_next_job``), else None.

    The connectors (``and``, ``then``...) split a name into actions; each action must name
    a read or search verb (``web_search``, ``list_and_read_files``).
    """
    words = _words(tool)
    effects = CATEGORY_VERBS["write"] | CATEGORY_VERBS["command"]
    if any(w in effects for w in words):
        return False
    reads = CATEGORY_VERBS["read"] | CATEGORY_VERBS["search"]
    actions: list[list[str]] = [[]]
    for word in words:
        if word in _CONNECTORS:
            actions.append([])
        else:
            actions[-1].append(word)
    if words and all(any(w in reads for w in action) for action in actions):
        return True
    return None


def repeatable_tools(tools: Iterable[Any]) -> frozenset[str]:
    """The names of MCP tools annotated as safe to call again, for ``ClearingPolicy(repeatable=)``.

    Takes MCP tool definitions as ``list_tools`` returns them (SDK objects or dicts):
    a tool counts when its annotations say ``readOnlyHint`` or ``idempotentHint``. Nothing
    is imported; anything without those annotations is left out.
    """
    names = set()
    for tool in tools:
        name = field_of(tool, "name")
        notes = field_of(tool, "annotations")
        if not isinstance(name, str) or notes is None:
            continue
        hints = [field_of(notes, k) for k in ("readOnlyHint", "read_only_hint")]
        hints += [field_of(notes, k) for k in ("idempotentHint", "idempotent_hint")]
        if any(h is True for h in hints):
            names.add(name)
    return frozenset(names)

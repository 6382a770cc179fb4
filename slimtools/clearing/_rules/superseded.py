"""The superseded rule: a result a later one makes stale goes, whatever its age.

Two rules, both decided when the newer result is filed (it is then in the history in full):

- **the same call again**: a later call of the same tool with the same arguments (the same
  file read, ``git status``, the same search) supersedes the earlier result; write tools
  are left out (two equal writes are two effects, each confirmation its own record);
- **a re-read after a write**: a read of a path that a later call wrote, and that a still
  later read re-read (with any arguments), is stale: the file changed and the new read shows
  it.

A path is the ``path``-like argument of a call (:data:`PATH_KEYS`); a call reads or writes
by its tool's category, or by its ``command`` argument for editors that do both
(``str_replace_editor`` ``view`` reads, ``create``/``str_replace``/``insert`` write).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from slimtools.clearing.excerpt import PATH_KEYS

if TYPE_CHECKING:
    from slimtools.clearing._batch import Pending
    from slimtools.clearing._rules.base import Proposal
    from slimtools.clearing.policy import ClearingPolicy


_READ_COMMANDS = frozenset({"view", "read", "cat", "show"})
_WRITE_COMMANDS = frozenset(
    {"create", "str_replace", "insert", "write", "edit", "undo_edit", "append", "delete"}
)

SAME_CALL = "the same call again"
REREAD = "a re-read after a write"
_NEVER = 1 << 62  # a turn no run reaches
_SWEEP = 8  # turns between sweeps of the entries that fell due


class Superseded:
    """The latest result of each call and of each path, to tell which older one went stale.

    Only a result not yet due by its age can be superseded (one already due may have been
    cleared by age before the newer result came), so each entry is dropped once its result
    falls due: the tables hold the results of the last few turns, not of the whole run.
    """

    __slots__ = ("_category", "_due", "_expiry", "_reads", "_tools", "_writes")

    def __init__(self, policy: ClearingPolicy) -> None:
        self._category = policy.category_of
        # tool -> (its category, asked once; its latest result per canonical arguments):
        # keyed by bytes within a tool, no (tool, arguments) tuple is made per result
        self._tools: dict[str, tuple[str | None, dict[bytes, Pending]]] = {}
        self._reads: dict[str, Pending] = {}
        self._writes: dict[str, int] = {}  # path -> position of its latest write
        # Per retention (turns kept), the entries in the order filed, flat (table, key,
        # entry, ...): turns only grow, so each queue is in due order (no heap, and no tuple
        # allocated per entry).
        self._expiry: dict[int, deque[Any]] = {}
        self._due = _NEVER  # the turn of the next sweep (never while nothing is filed)

    def propose(self, newer: Pending, due: int) -> list[Proposal]:
        """File ``newer`` (due by its age at turn ``due``); the older results it
        supersedes, each stale from ``newer``'s turn, with the reason."""
        turn = newer.turn
        if turn >= self._due:
            self._expire(turn)
        tool, args = newer.tool, newer.call.args
        known = self._tools.get(tool)
        if known is None:  # the tool's category and table of calls, made once per tool
            known = self._tools[tool] = (self._category(tool), {})
        category, calls = known
        path = None if _PATHS.isdisjoint(args) else _path(args)
        kind = _kind(category, args, path) if "command" in args else category
        if kind == "write":
            if path is not None:
                self._writes[path] = newer.position
            return []
        if kind == "input":
            return []
        queue = self._expiry.get(due - turn)
        if queue is None:
            queue = self._expiry[due - turn] = deque()
        if self._due == _NEVER:  # the first entry since the tables emptied
            self._due = due
        key = _canonical(args)
        older = calls.get(key)
        calls[key] = newer
        queue += (calls, key, newer)
        if kind == "read" and path is not None:
            reads = self._reads
            read = reads.get(path)
            reads[path] = newer
            queue += (reads, path, newer)
            written = self._writes.get(path, -1)
            if read is not None and read is not older and read.position < written:
                if older is None:
                    return [(read, turn, REREAD)]
                return [(older, turn, SAME_CALL), (read, turn, REREAD)]
        return [(older, turn, SAME_CALL)] if older is not None else []

    def _expire(self, turn: int) -> None:
        """Drop the entries whose results are due by ``turn``: none can be superseded now."""
        due = _NEVER
        for keep, queue in self._expiry.items():
            # each entry is three items: its table, its key, the result (whose turn is due)
            while queue and queue[2].turn + keep <= turn:
                table, key, entry = queue.popleft(), queue.popleft(), queue.popleft()
                if table.get(key) is entry:
                    del table[key]
            if queue and queue[2].turn + keep < due:
                due = queue[2].turn + keep
        # Swept every few turns, not at each due entry: an entry past its due turn that
        # waits for the sweep supersedes nothing (the engine checks the age of what is
        # superseded), so the tables hold at most _SWEEP turns more than they must.
        self._due = max(due, turn + _SWEEP)


def _kind(category: str | None, args: Mapping[str, Any], path: str | None) -> str | None:
    command = args.get("command")
    if isinstance(command, str) and path is not None:
        if command in _WRITE_COMMANDS:
            return "write"
        if command in _READ_COMMANDS:
            return "read"
    return category


_PATHS = frozenset(PATH_KEYS)


def _path(args: Mapping[str, Any]) -> str | None:
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _canonical(args: Mapping[str, Any]) -> bytes:
    """The arguments as sorted-key JSON: equal arguments, equal bytes, whatever their order."""
    try:
        return orjson.dumps(args, option=orjson.OPT_SORT_KEYS, default=repr)
    except (TypeError, orjson.JSONEncodeError):
        return repr(sorted(map(repr, args.items()))).encode()

"""The clearing engine in replay mode: what a policy would clear in a run it never holds.

The ledger's streaming replay (:mod:`slimtools.ledger.stream`) bills a long recorded run
message by message, under several policies at once, without keeping the run's texts. It
reaches the engine through this module alone:

- :func:`read_messages` and :class:`Reading` are the engine's own ingestion (turns, tokens
  once per piece, calls paired with results), so the replay's baseline and every engine
  agree on what a turn, a call, a result and its tokens are;
- :class:`ReplayClearer` is a :class:`~slimtools.clearing.Clearer` for messages the caller
  makes small (the ledger's stand-ins): of its output it keeps only the messages the caller
  holds (:meth:`~ReplayClearer.hold`), it hands back no copy of the history and keeps no
  memory for re-reads (a replay only appends), and each :meth:`~ReplayClearer.account`
  says which results it cleared, with what each saved;
- :func:`standing_args` gives the arguments that stand for a call's under the rules of
  superseded results (its ``command``, its path and a digest of the whole), so a small
  message carrying them is superseded exactly when the real one would be;
- :class:`PlaceholderRenderer` renders the placeholders a policy writes from results the
  caller still holds, so that a stand-in can carry the real placeholder's size, and says
  what blanking a cleared call's arguments saves.

The rejected design, a second engine for the replay (the ledger once had its own ingestion,
its own index of saved tokens and wrote into a clearer's private state), made every rule
two rules that had to agree.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from slimtools.clearing._batch import Forgetful, Pending, State
from slimtools.clearing._engine import Clearer
from slimtools.clearing._ingest import FileResult, NoteCall, Reading, SeenCall, read_messages
from slimtools.clearing._render import Placeholders
from slimtools.clearing._rules.superseded import standing_args
from slimtools.clearing.excerpt import render_args
from slimtools.clearing.formats.base import RawResult, new_tuple
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.report import ClearingReport

__all__ = [
    "Cleared",
    "FileResult",
    "NoteCall",
    "PlaceholderRenderer",
    "Reading",
    "ReplayClearer",
    "SeenCall",
    "read_messages",
    "standing_args",
]

Superseded = Callable[[str, int, str], str]
"""``(call id, turn of the newer result, reason) -> placeholder``: the text a result the
engine clears as superseded becomes (the caller renders it from the real result)."""


class Cleared(NamedTuple):
    """One result a replay pass cleared: what clearing it saved, and where."""

    call_id: str
    tool: str
    position: int  # the result's message
    call_position: int  # its call's message
    saving: int  # tokens the placeholder saves
    input_saving: int  # tokens blanking the call's arguments saves (0: not blanked)


class ReplayClearer(Clearer):
    """A :class:`~slimtools.clearing.Clearer` in replay mode (see the module docstring).

    It decides exactly as a clearer does; only what it keeps differs. The caller promises
    to only append to the history it passes, and to :meth:`hold` every message the engine
    may still rewrite before passing it (a result that may be cleared, a call whose
    arguments may be blanked), then :meth:`release` it; other messages are let go once
    read. Rewriting a message that is not held raises ``KeyError``.

    Args:
        policy: the policy, as the engine sees it (its counter and template read the
            caller's small messages).
        format: the format of the messages passed.
        superseded: renders the placeholder of a result cleared as superseded (the
            engine's own rendering of the small message's arguments otherwise).
    """

    def __init__(
        self,
        policy: ClearingPolicy,
        *,
        format: str,
        superseded: Superseded | None = None,
    ) -> None:
        self._holds: dict[int, int] = {}
        self._held = _Held(self._holds)
        super().__init__(policy, format=format, observed=False)
        self._memory = self._cleared = _Recorder()
        if superseded is not None:
            self._placeholders = _Replaying(self.policy, superseded)

    _edits = False  # the caller only appends: no copy of what was read is kept

    def _new_state(self) -> State:
        # Tokens before each message as machine integers (the replay's counts are
        # integers): 8 bytes a message where a list keeps a Python int.
        held = self._held = _Held(self._holds)
        return State(out=held, offsets=array("q"))  # type: ignore[arg-type]

    def account(self, history: Sequence[Any]) -> tuple[ClearingReport, list[Cleared]]:
        """Clear before one model call whose prompt is ``history``: the report, and each
        result cleared (in the order written)."""
        report = self.clear_with_report(history)[1]
        return report, self._cleared.take()

    def saved_before(self, position: int) -> int:
        """Tokens clearing has saved so far in the messages before ``position``."""
        return self._state.savings.before(position)

    def hold(self, position: int) -> None:
        """The engine may rewrite the message at ``position`` once more: keep it."""
        holds = self._holds
        holds[position] = holds.get(position, 0) + 1

    def release(self, position: int) -> None:
        """One rewrite at ``position`` is done or will never come; with none left, the
        message is let go."""
        left = self._holds.pop(position) - 1
        if left:
            self._holds[position] = left
        else:
            self._held.release(position)

    @property
    def held(self) -> list[int]:
        """The positions of the messages the engine keeps, in order."""
        return sorted(self._held.positions())


class PlaceholderRenderer:
    """The placeholders one policy writes, rendered from results the caller holds."""

    def __init__(self, policy: ClearingPolicy) -> None:
        self._placeholders = Placeholders(policy)

    def text(
        self, result: RawResult, *, tool: str, args: dict[str, Any], tokens: int, turn: int
    ) -> str | None:
        """The placeholder ``result`` (of a ``tokens``-token, turn-``turn`` call of ``tool``
        with ``args``) becomes; None when it must stay (a user template failed)."""
        call = SeenCall(tool, args, 0, 0, 0, 0)
        info = (result, tool, call, 0, turn, tokens, 0, "", 0, 0, 0)
        pending: Pending = new_tuple(Pending, info)
        return self._placeholders.text(pending)

    def superseded(
        self, args_text: str, *, tool: str, chars: int, tokens: int, turn: int, reason: str
    ) -> str:
        """The placeholder of a result superseded by the newer result of ``turn``
        (``args_text``: :meth:`arguments` of its call; ``chars``: its length)."""
        return self._placeholders.superseded_text(
            tool, args_text, chars, tokens, turn=turn, reason=reason
        )

    @staticmethod
    def arguments(args: dict[str, Any]) -> str:
        """A call's arguments as placeholders show them (bounded to a short line)."""
        return render_args(args)

    def input_saving(self, tool: str, call: SeenCall) -> int:
        """Tokens blanking a cleared call's arguments saves (0: the policy keeps them)."""
        return self._placeholders.input_saving(tool, call)

    def args_saving(self, name: str, args_tokens: int) -> int:
        """Tokens blanking a call's arguments saves (``args_tokens``: ``"name args"``'s)."""
        return self._placeholders.args_saving(name, args_tokens)


class _Recorder(Forgetful):
    """The memory of a replay: nothing for re-reads (a replay only appends), and the
    results of the last pass until they are taken."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        super().__init__()
        self._last: list[Pending] = []

    def remember(self, cleared: list[Pending]) -> None:
        """Note the results just written."""
        self._last += cleared

    def take(self) -> list[Cleared]:
        """The results written since the last call, as :class:`Cleared`."""
        last, self._last = self._last, []
        return [
            Cleared(p.raw.call_id, p.tool, p.position, p.call.position, p.saving, p.input_saving)
            for p in last
        ]


class _Replaying(Placeholders):
    """The engine's placeholders, with superseded results given by the caller."""

    def __init__(self, policy: ClearingPolicy, superseded: Superseded) -> None:
        super().__init__(policy)
        self._superseded = superseded

    def superseded(self, pending: Pending, turn: int, reason: str) -> str:
        """The caller's placeholder for a superseded result."""
        return self._superseded(pending.raw.call_id, turn, reason)


class _Held:
    """A replay engine's output list: by position, only the messages it may still rewrite
    (those held when they are appended); the copy of it handed back is empty (over a
    180,000-message session those copies, which a replay never reads, were two thirds of
    the time and grew with the square of the run)."""

    __slots__ = ("_held", "_holds", "_length")

    def __init__(self, holds: dict[int, int]) -> None:
        self._holds = holds
        self._held: dict[int, Any] = {}
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def __iadd__(self, messages: Iterable[Any]) -> _Held:
        position, holds, held = self._length, self._holds, self._held
        for message in messages:
            if position in holds:
                held[position] = message
            position += 1
        self._length = position
        return self

    def __getitem__(self, position: int) -> Any:
        return self._held[position]

    def __setitem__(self, position: int, message: Any) -> None:
        self._held[position] = message

    def copy(self) -> list[Any]:
        return []

    def release(self, position: int) -> None:
        self._held.pop(position, None)

    def positions(self) -> Iterable[int]:
        return self._held.keys()

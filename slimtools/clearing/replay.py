"""The clearing engine in replay mode: what a policy would clear in a run it never holds.

The ledger's streaming replay (:mod:`slimtools.ledger.stream`) bills a long recorded run
message by message, under several policies at once, without keeping the run's texts; it
reaches the engine through this module alone: :func:`read_messages` (the engine's own
ingestion), :class:`ReplayClearer` (a clearer that decides as any does but rewrites and
keeps no message) and :class:`PlaceholderRenderer` (one result's placeholder). See "The
replay mode" in docs/clearing.md.

The rejected designs: a second engine for the replay (its own ingestion and index of saved
tokens, writing into a clearer's private state), then small stand-in messages fed to the
engine with a second model of which of them it may still rewrite; each made every rule two
rules that had to agree.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

from slimtools.clearing._batch import Memory, Pending, State, account_batch
from slimtools.clearing._engine import Clearer
from slimtools.clearing._ingest import Reading, SeenCall, read_messages
from slimtools.clearing._render import Placeholders
from slimtools.clearing.formats.base import Codec, RawResult, new_tuple
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.report import ClearingReport

__all__ = [
    "Cleared",
    "PlaceholderRenderer",
    "Reading",
    "ReplayClearer",
    "SeenCall",
    "read_messages",
]

_NO_ARGS: dict[str, Any] = {}


class Cleared(NamedTuple):
    """One result a replay pass cleared: what clearing it saved, and where."""

    call_id: str
    tool: str
    position: int  # the result's message
    call_position: int  # its call's message
    saving: int  # tokens the placeholder saves
    input_saving: int  # tokens blanking the call's arguments saves (0: not blanked)
    placeholder: str = ""  # what it became (kept only when the replay keeps placeholders)


class ReplayClearer(Clearer):
    """A :class:`~slimtools.clearing.Clearer` in replay mode (see the module docstring).

    It decides exactly as a clearer does; only what it keeps differs. Feed it every
    message in order with :meth:`read` and call :meth:`account` where a model call would
    clear. Once a result's placeholder is rendered, the engine keeps its figures only
    (the result's text, its call's arguments and, unless ``placeholders``, the placeholder
    are let go), so memory holds the texts of the results still waiting for their turn.

    Args:
        policy: the policy.
        format: the format of the messages read.
        placeholders: keep each placeholder's text to report it (:attr:`Cleared.placeholder`).
    """

    def __init__(self, policy: ClearingPolicy, *, format: str, placeholders: bool = False) -> None:
        super().__init__(policy, format=format, observed=False)
        self._recorder = _Recorder()
        self._memory = self._recorder
        self._placeholder_texts = placeholders
        self._reader: Codec = self._codec  # type: ignore[assignment]  # named: never None

    _write = staticmethod(account_batch)  # the same accounting, no message rewritten

    def _new_state(self) -> State:
        # Tokens before each message as machine integers: 8 bytes a message where a list
        # keeps a Python int.
        return State(offsets=array("q"))

    def _advance(self, history: Sequence[Any]) -> ClearingReport:
        raise TypeError("a ReplayClearer reads with read() and clears with account()")

    def read(self, message: Any) -> None:
        """Ingest the next message of the run."""
        state = self._state
        n = state.n
        read_messages(
            state, self._reader, self.policy.token_counter, (message,), 0, first=n, file=self._file
        )
        state.n = n + 1

    def account(self) -> tuple[ClearingReport, list[Cleared]]:
        """Clear before a model call whose prompt is every message read: the report, and
        each result cleared (in the order written)."""
        report = self.last_report = self._evaluate(self._reader)
        return report, self._recorder.take()

    def saved_before(self, position: int) -> int:
        """Tokens clearing has saved so far in the messages before ``position``."""
        return self._state.savings.before(position)

    def _ready(self, made: Pending) -> None:
        super()._ready(self._lean(made))

    def _lean(self, pending: Pending) -> Pending:
        """A ready result with its figures only: decided, it needs no text any more."""
        lean = (
            pending.raw._replace(text=""),
            pending.tool,
            pending.call._replace(args=_NO_ARGS),
            *pending[3:7],
            pending.placeholder if self._placeholder_texts else "",
            *pending[8:],
        )
        made: Pending = new_tuple(Pending, lean)
        return made


class PlaceholderRenderer:
    """The placeholder one policy writes for a result the caller holds."""

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


class _Recorder(Memory):
    """The memory of a replay: nothing for re-reads (a replay only appends), and the
    results of the last pass until they are taken."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        super().__init__()
        self._last: list[Pending] = []

    def remember(self, cleared: list[Pending]) -> None:
        """Note the results just cleared."""
        self._last += cleared

    def take(self) -> list[Cleared]:
        """The results cleared since the last call, as :class:`Cleared`."""
        last, self._last = self._last, []
        return [
            Cleared(
                p.raw.call_id,
                p.tool,
                p.position,
                p.call.position,
                p.saving,
                p.input_saving,
                p.placeholder,
            )
            for p in last
        ]

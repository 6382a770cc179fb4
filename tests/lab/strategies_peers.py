"""Histories for the peer clearing steps: one call a turn (SWE-agent's scaffold), text only."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from tests.clearing.strategies_clearing import Call, Res, Turn

_line = st.sampled_from(["ok", "x" * 40, "错误 line", "", "  indent", "{", "é"])
_lines = st.lists(_line, min_size=0, max_size=40).map("\n".join)


@st.composite
def one_call_turns(draw: st.DrawFn, max_turns: int = 16) -> list[Turn]:
    """Turns of exactly one call with a text result each, as SWE-agent's own runs are."""
    out = []
    for i in range(draw(st.integers(0, max_turns))):
        call = Call(f"call_{i}", draw(st.sampled_from(["bash", "open", "edit"])), {}, None)
        call = replace(call, result=Res(draw(_lines)))
        out.append(Turn((call,), user="task" if i == 0 else None, text="thought"))
    return out


def without_images(turns: list[Turn]) -> list[Turn]:
    """The same turns with every image part of every result dropped."""

    def strip(res: Res | None) -> Res | None:
        if res is None or isinstance(res.content, str):
            return res
        return replace(res, content=tuple(p for p in res.content if p[0] != "image"))

    return [
        replace(
            turn,
            calls=tuple(replace(c, result=strip(c.result)) for c in turn.calls),
            orphans=tuple((cid, strip(r) or r) for cid, r in turn.orphans),
        )
        for turn in turns
    ]

"""A hint's tail carries what each part offers as data, so trimming never reads its text."""

from __future__ import annotations

from slimtools._core.fit import Out, Part, forget_handles


def test_forgetting_handles_drops_the_companion_offers_only():
    """Without a store, the record and handle offers go; words naming the companion stay."""
    tail = [
        Part("get_record(h) reads one record later"),
        Part("full record: get_record('h1')", "record"),
        Part("next: search(page=2)", "next"),
        Part("more: get_record('h2', 2)", "handle"),
    ]
    forget_handles(Out(total=1), tail)
    assert tail == [
        Part("get_record(h) reads one record later"),
        Part("next: search(page=2)", "next"),
    ]


def test_the_hint_joins_the_parts_texts():
    """An envelope's hint reads the parts' texts in order, after the notes."""
    env = Out(total=1, briefs=[{"id": 1}], notes=["1 shown"]).build([Part("a"), Part("b", "next")])
    assert env.hint == "1 shown; a; b"

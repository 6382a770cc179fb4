"""Hypothesis strategies for the proxy: records with secrets, in the shapes upstreams send."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SECRET_MARK = "S3CR3T"
"""Every denied value holds this mark, so a leak is one substring search away."""

_names = st.sampled_from(["id", "name", "title", "state", "note"])
_plain = st.one_of(st.integers(0, 999), st.text("abcxyz ", max_size=8), st.booleans())
_secret = st.text("0123456789", min_size=1, max_size=6).map(lambda s: f"{SECRET_MARK}-{s}")


@st.composite
def records_with_secrets(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records with plain fields and a denied ``ssn`` (sometimes nested under ``user``)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        record: dict[str, Any] = draw(st.dictionaries(_names, _plain, max_size=3))
        if draw(st.booleans()):
            record["ssn"] = draw(_secret)
        else:
            record["user"] = {"login": draw(_plain), "ssn": draw(_secret)}
        out.append(record)
    return out


def shapes(records: list[dict[str, Any]]) -> dict[str, str]:
    """The records as texts an upstream may send beside an image or in an error."""
    return {
        "json list": json.dumps(records),
        "json dict": json.dumps({"error": "conflict", "rows": records}),
        "pretty": json.dumps(records, indent=2),
        "repr in prose": f"bad row {records[0]!r}",
        "json in prose": f"failed on {json.dumps(records[0])}",
        "escaped json in prose": f"failed on {json.dumps(json.dumps(records[0]))}",
        "json in a message": json.dumps({"error": f"failed on {json.dumps(records[0])}"}),
        "repr in a message": json.dumps({"message": f"failed on {records[0]!r}"}),
    }

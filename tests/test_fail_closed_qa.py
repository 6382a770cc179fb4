"""Fail closed, tried as a demanding user would: shapes and texts the first pass did not plan.

Each test is a hole found by the red-team pass of issue 17, with the fix it needed.
"""

from __future__ import annotations

from pydantic import BaseModel

from slimtools import Toolkit, project_fields, summarize_with_handle

SECRET = "SECRET-ssn-123456789"
HIDDEN = "HIDDEN-notallowed-xyz"


class Brief(BaseModel):
    """The allowlist of the tools below."""

    id: int
    name: str


class Row(BaseModel):
    """A backend row, with a denied and a non-allowlisted field."""

    id: int
    name: str
    ssn: str
    extra: str


def _failing(kit: Toolkit, error: BaseException) -> str:
    """What the model reads when a guarded tool raises ``error``."""

    @project_fields(Brief, deny=["ssn"])
    @summarize_with_handle(key="id")
    def failing() -> list[dict[str, object]]:
        raise error

    kit.tool(failing)
    return kit.call("failing", {}).text


def test_an_error_quoting_a_pydantic_models_str_shows_only_allowlisted_fields():
    """``f"bad row {model}"`` (pydantic's ``id=1 name='a'`` form) masks the other fields."""
    row = Row(id=1, name="a", ssn=SECRET, extra=HIDDEN)
    text = _failing(Toolkit("qa"), ValueError(f"bad row {row}"))
    assert SECRET not in text
    assert HIDDEN not in text
    assert "name='a'" in text

"""The envelope: what a slimmed tool returns instead of a raw dump.

Model-visible shape, in this key order: ``total``, ``briefs``, ``hint``, then the optional
``page``, ``handle`` and ``text`` only where they carry information. Record results carry
``briefs``; text results (a file, command output) carry ``text`` instead, with ``total``
counting lines. ``str(envelope)`` is the compact JSON that the model sees.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from slimtools._json import dumps, loads

BriefT = TypeVar("BriefT")

ENVELOPE_KEYS = ("total", "briefs", "hint", "page", "handle", "text")
"""Every key an envelope can show the model, in the order it shows them."""


class Envelope(BaseModel, Generic[BriefT]):
    """A slim tool result: how many items there are, a few briefs, and how to get more.

    Attributes:
        total: the full count of records (or lines, for text) the tool produced.
        briefs: the projected records of this page, each carrying its handle when the tool
            keeps handles; empty for text results.
        hint: one line telling the model what it sees and the exact call for more.
        page: the page shown, for paginated tools.
        handle: the handle of the full text, for text results kept under a handle.
        text: the lines shown, for text results.
    """

    model_config = ConfigDict(frozen=True)

    total: int = Field(ge=0)
    briefs: list[BriefT] = Field(default_factory=list)
    hint: str = ""
    page: int | None = None
    handle: str | None = None
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The plain-JSON form of exactly what ``str(self)`` shows the model."""
        out: dict[str, Any] = {"total": self.total}
        if self.text is None:
            out["briefs"] = self.briefs
        out["hint"] = self.hint
        if self.page is not None:
            out["page"] = self.page
        if self.handle is not None:
            out["handle"] = self.handle
        if self.text is not None:
            out["text"] = self.text
        return out

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON bytes (non-ASCII kept as is: escapes cost tokens)."""
        return dumps(self.as_dict())

    def __str__(self) -> str:
        return self.to_json().decode("utf-8")

    def jsonable(self) -> dict[str, Any]:
        """``as_dict`` with every value reduced to plain JSON types (for structured output)."""
        result: dict[str, Any] = loads(self.to_json())  # integers beyond 64 bits stay exact
        return result


_object_setattr = object.__setattr__
_FIELD_NAMES = frozenset(ENVELOPE_KEYS)


def _constructs_plainly(cls: type[BaseModel]) -> bool:
    """True when ``model_construct`` of ``cls`` only fills the four instance slots.

    That holds for a model without ``model_post_init``, extra fields or private attributes
    whose fields are exactly the envelope keys (checked once, at import).
    """
    return (
        not cls.__pydantic_post_init__
        and not cls.__pydantic_root_model__
        and not cls.__private_attributes__
        and cls.model_config.get("extra") in (None, "ignore")
        and tuple(cls.model_fields) == ENVELOPE_KEYS
    )


_PLAIN_CONSTRUCT = _constructs_plainly(Envelope)


def make_envelope(
    total: int,
    briefs: list[Any],
    hint: str,
    *,
    page: int | None = None,
    handle: str | None = None,
    text: str | None = None,
) -> Envelope[Any]:
    """An ``Envelope`` from values the pipeline built itself (trusted: no validation).

    The same instance ``Envelope.model_construct`` returns given all six fields, built
    directly: ``model_construct`` walks every field's aliases and defaults, which costs
    about four times as much, on every tool call. Falls back to ``model_construct`` when
    a pydantic release or a change to ``Envelope`` breaks the assumptions above.
    """
    if not _PLAIN_CONSTRUCT:
        return Envelope.model_construct(
            total=total, briefs=briefs, hint=hint, page=page, handle=handle, text=text
        )
    env: Envelope[Any] = Envelope.__new__(Envelope)
    _object_setattr(
        env,
        "__dict__",
        {
            "total": total,
            "briefs": briefs,
            "hint": hint,
            "page": page,
            "handle": handle,
            "text": text,
        },
    )
    _object_setattr(env, "__pydantic_fields_set__", set(_FIELD_NAMES))
    _object_setattr(env, "__pydantic_extra__", None)
    _object_setattr(env, "__pydantic_private__", None)
    return env


def is_envelope_dict(value: object) -> bool:
    """True when ``value`` looks like a serialised envelope (has ``total`` and ``hint``)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("total"), int)
        and isinstance(value.get("hint"), str)
        and ("briefs" in value or "text" in value)
    )

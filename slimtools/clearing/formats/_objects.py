"""Reading and copying messages that are dicts or SDK objects (pydantic models).

Codecs read a field the same way whether a message is a dict or an SDK object
(``ChatCompletionMessage``, ``ToolUseBlock``, a LangChain message) and rewrite one by a
shallow copy with changes, never in place.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from slimtools._fields import field_of

get = field_of
"""Read ``key`` from a dict or an attribute of an SDK object (OpenAI, Anthropic)."""


def updated(obj: Any, **changes: Any) -> Any:
    """A shallow copy of a dict or pydantic object with ``changes`` applied."""
    return with_changes(obj, changes)


def with_changes(obj: Any, changes: dict[str, Any]) -> Any:
    """:func:`updated` with the changes as one dict (no keyword packing on hot paths)."""
    fields = _COPYABLE.get(type(obj))
    if fields is not None and fields.issuperset(changes):  # a plain model seen before
        return _copied(obj, changes)
    if isinstance(obj, dict):
        return {**obj, **changes}
    if isinstance(obj, BaseModel):
        return model_copy(obj, changes)
    copy = getattr(obj, "model_copy", None)
    if copy is not None:
        return copy(update=changes)
    return {**to_dict(obj), **changes}


_BASE_COPY = BaseModel.__copy__
_BASE_MODEL_COPY = BaseModel.model_copy


def model_copy(model: BaseModel, changes: dict[str, Any]) -> Any:
    """``model.model_copy(update=changes)``, built directly (a test pins it to the original).

    Pydantic's shallow copy goes through ``copy.copy`` three times and a generic update;
    LangChain messages are rewritten once per cleared result, so a long pass spent a fifth
    of its time there. Falls back to ``model_copy`` for a model that customises copying or
    an update that is not a declared field.
    """
    cls = type(model)
    fields = _COPYABLE.get(cls, _UNSEEN)
    if fields is _UNSEEN:
        plain = cls.__copy__ is _BASE_COPY and cls.model_copy is _BASE_MODEL_COPY
        fields = _COPYABLE[cls] = frozenset(cls.__pydantic_fields__) if plain else None
    if fields is None or not fields.issuperset(changes):
        return model.model_copy(update=changes)
    return _copied(model, changes)


def _copied(model: BaseModel, changes: dict[str, Any]) -> Any:
    """The copy :func:`model_copy` builds, for a plain model and declared fields."""
    cls = type(model)
    new = cls.__new__(cls)
    state = model.__dict__.copy()
    state.update(changes)
    _object_setattr(new, "__dict__", state)
    extra = model.__pydantic_extra__
    _object_setattr(new, "__pydantic_extra__", extra if extra is None else extra.copy())
    _object_setattr(new, "__pydantic_fields_set__", model.__pydantic_fields_set__.union(changes))
    private = model.__pydantic_private__
    if private is not None:
        private = {k: v for k, v in private.items() if v is not PydanticUndefined}
    _object_setattr(new, "__pydantic_private__", private)
    return new


_UNSEEN: Any = object()
_COPYABLE: dict[type, frozenset[str] | None] = {}
_object_setattr = object.__setattr__


def to_dict(obj: Any) -> dict[str, Any]:
    """A plain dict of an SDK object (used only when it must be rebuilt)."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        result: dict[str, Any] = dump(exclude_none=True)
        return result
    return dict(vars(obj))

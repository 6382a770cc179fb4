"""Hypothesis strategies for the core: records, allowlist models, tricky texts.

Records come in the four shapes tools return (dicts, Pydantic models, dataclasses, plain
objects), always with random extra keys at every level that no allowlist names, so that
"deny by default" is tested against data that tries to leak. Texts are built from whole
graphemes (CJK, emoji with skin tones, ZWJ sequences, flags, combining marks), so that a
test knows every safe cut.
"""

from __future__ import annotations

import dataclasses
import enum
import keyword
import re
import string
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import AliasPath, BaseModel, ConfigDict, Field, create_model

from slimtools import Clip
from slimtools.redaction import PROSE_WORDS

# texts -------------------------------------------------------------------------------

CJK = ["日", "本", "語", "漢", "字", "한", "국", "어", "カ", "な", "。", "、"]
EMOJI = ["😀", "🚀", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "1️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"]
FLAGS = ["🇫🇷", "🇯🇵", "🇺🇸", "🇩🇪"]
COMBINING = ["é", "ñ", "ẹ́", "a\u0308\u0301", "क्", "ि", "ก\u0e31", "각"]
ASCII = [*"abcdefghijklmnopqrstuvwxyz0123456789", " ", " ", "-", ".", "\n"]

graphemes = st.sampled_from([*CJK, *EMOJI, *FLAGS, *[c for c in COMBINING if c != "ि"], *ASCII])
"""One user-perceived character that must never be cut in the middle."""

grapheme_lists = st.lists(graphemes, max_size=120)
"""A text as the list of its graphemes (join them for the text; the joints are safe cuts)."""

texts = grapheme_lists.map("".join)
"""Texts mixing ASCII, CJK, emoji (skin tones, ZWJ sequences), flags and combining marks."""

# records -----------------------------------------------------------------------------

identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not hasattr(BaseModel, s) and not s.startswith("model_")
)
"""Field names that are valid identifiers and free in Pydantic models (``copy`` is taken)."""

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)

json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(identifiers, inner, max_size=3)
    ),
    max_leaves=8,
)
"""Any JSON value, nested, with random keys: what extra (non-allowlisted) fields hold."""

SECRET_PREFIX = "zz_"
"""Every random extra key starts with this, so no allowlist can name one by chance."""

extra_keys = identifiers.map(lambda s: SECRET_PREFIX + s)


def extras() -> st.SearchStrategy[dict[str, Any]]:
    """Random extra fields (secrets, tenant ids, nested junk) that no allowlist names."""
    return st.dictionaries(extra_keys, json_values, max_size=4)


@dataclass(frozen=True)
class Shape:
    """An allowlist shape: top-level fields, some of them nested records or lists of them."""

    leaves: tuple[str, ...]
    nested: tuple[tuple[str, tuple[str, ...], bool], ...]  # (name, leaves, is_list)
    renamed: bool = False  # leaves are read from "SRC_<leaf>" through validation_alias

    def source(self, leaf: str) -> str:
        """The record key a top-level leaf is read from."""
        return f"SRC_{leaf}" if self.renamed else leaf


shapes = st.builds(
    lambda leaves, nested, renamed: Shape(
        tuple(leaves),
        tuple((n, tuple(ls), many) for n, ls, many in nested if n not in leaves),
        renamed,
    ),
    st.lists(identifiers, min_size=1, max_size=4, unique=True),
    st.lists(
        st.tuples(
            identifiers, st.lists(identifiers, min_size=1, max_size=3, unique=True), st.booleans()
        ),
        max_size=2,
        unique_by=lambda t: t[0],
    ),
    st.booleans(),
)
"""Random allowlist shapes: a few leaf fields (maybe renamed from other source keys) and up to
two nested (or list-nested) ones."""


def record_dicts(shape: Shape) -> st.SearchStrategy[dict[str, Any]]:
    """Dict records for ``shape``: some declared fields (scalars), plus random extras."""

    def leaf_fields(names: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({}, optional=dict.fromkeys(names, json_scalars))

    def with_extras(names: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
        return st.builds(lambda a, b: {**b, **a}, leaf_fields(names), extras())

    nested: dict[str, st.SearchStrategy[Any]] = {}
    for name, leaves, many in shape.nested:
        inner = with_extras(leaves)
        nested[name] = st.lists(inner, max_size=3) if many else inner
    return st.builds(
        lambda top, sub, junk: {**junk, **top, **sub},
        leaf_fields(tuple(shape.source(leaf) for leaf in shape.leaves)),
        st.fixed_dictionaries({}, optional=nested),
        extras(),
    )


def allowlist_model(shape: Shape) -> type[BaseModel]:
    """The Pydantic allowlist of ``shape``: optional leaves, nested models, lists of them."""
    fields: dict[str, Any] = {
        leaf: (Any, Field(default=None, validation_alias=shape.source(leaf)))
        for leaf in shape.leaves
    }
    for name, leaves, many in shape.nested:
        sub = create_model(f"Sub_{name}", **dict.fromkeys(leaves, (Any, None)))
        fields[name] = (list[sub] if many else sub | None, None)  # type: ignore[valid-type]
    return create_model("Brief", **fields)


def dotted_names(shape: Shape) -> list[str]:
    """The same allowlist as a list of (dotted) field names (a list cannot rename)."""
    names = list(shape.leaves)
    for name, leaves, _ in shape.nested:
        names += [f"{name}.{leaf}" for leaf in leaves]
    return names


def allowed_keys(shape: Shape) -> dict[str, set[str] | None]:
    """Top-level output names, each with the nested names allowed under it (None: a leaf)."""
    allowed: dict[str, set[str] | None] = dict.fromkeys(shape.leaves)
    for name, leaves, _ in shape.nested:
        allowed[name] = set(leaves)
    return allowed


# record shapes -----------------------------------------------------------------------


class PlainRecord:
    """A plain object whose data are attributes, with a method that is not data."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def describe(self) -> str:
        """A method: never part of a brief."""
        return "a plain record"


def as_plain(data: Any) -> Any:
    """``data`` with every dict turned into a :class:`PlainRecord`."""
    if isinstance(data, dict):
        return PlainRecord(**{k: as_plain(v) for k, v in data.items()})
    if isinstance(data, list):
        return [as_plain(v) for v in data]
    return data


def as_model(data: Any) -> Any:
    """``data`` with every dict turned into a Pydantic model instance (extra fields kept)."""
    if isinstance(data, dict):
        model = create_model(
            "Record", __config__=ConfigDict(extra="allow"), **dict.fromkeys(data, (Any, None))
        )
        return model(**{k: as_model(v) for k, v in data.items()})
    if isinstance(data, list):
        return [as_model(v) for v in data]
    return data


def as_dataclass(data: Any) -> Any:
    """``data`` with every dict turned into a dataclass instance."""
    if isinstance(data, dict):
        cls = dataclasses.make_dataclass("Record", list(data))
        return cls(**{k: as_dataclass(v) for k, v in data.items()})
    if isinstance(data, list):
        return [as_dataclass(v) for v in data]
    return data


RECORD_FORMS = {
    "dict": lambda d: d,
    "model": as_model,
    "dataclass": as_dataclass,
    "object": as_plain,
}
"""How a tool may hand back the same record: dict, Pydantic model, dataclass, plain object."""

record_forms = st.sampled_from(sorted(RECORD_FORMS))


# flat log records (for paging, handles and budgets) ----------------------------------

log_rows = st.lists(
    st.fixed_dictionaries(
        {
            "level": st.sampled_from(["INFO", "WARN", "ERROR"]),
            "message": texts,
            "tenant": st.sampled_from(["acme", "globex"]),
        },
        optional={"zz_secret": st.text(max_size=10)},
    ),
    max_size=40,
).map(lambda rows: [{"id": i, **row} for i, row in enumerate(rows)])
"""Log rows with unique ``id`` values 0..n-1 and text that mixes scripts."""


class LogBrief(BaseModel):
    """The allowlist of the design article's ``search_logs``."""

    id: int
    level: str
    summary: str = Field(validation_alias="message")


class AliasedBrief(BaseModel):
    """An allowlist that renames and reaches into nested data."""

    id: int
    author: str | None = Field(default=None, validation_alias=AliasPath("user", "login"))
    first_label: str | None = Field(default=None, validation_alias=AliasPath("labels", 0, "name"))


# typed allowlists (the shape rule) -----------------------------------------------------


class Colour(str, enum.Enum):
    """A string enum a backend may return under a scalar field."""

    RED = "red"
    GREEN = "green, a much longer value than any clip allows"


class Tag(str):
    """A ``str`` subclass with an attribute dictionary (like ``markupsafe.Markup``)."""


class Sub(BaseModel):
    """The nested allowlist of typed shapes."""

    a: str | None = None
    b: int | None = None


_ANNOTATIONS: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "literal": Literal["a", "b"],
    "enum": Colour,
    "optional_str": str | None,
    "clip": Annotated[str, Clip(8)],
    "list_str": list[str],
    "dict_int": dict[str, int],
    "model": Sub | None,
    "list_model": list[Sub],
}
"""Field kinds of typed shapes and the annotation each declares."""

TYPED_KINDS = tuple(_ANNOTATIONS)


@dataclass(frozen=True)
class TypedShape:
    """A typed allowlist: field name -> kind (a key of ``_ANNOTATIONS``)."""

    fields: dict[str, str]


typed_shapes = st.dictionaries(
    identifiers, st.sampled_from(TYPED_KINDS), min_size=1, max_size=5
).map(TypedShape)
"""Random allowlists whose fields declare scalar, literal, enum, list, dict and model shapes."""


def typed_allowlist(shape: TypedShape) -> type[BaseModel]:
    """The Pydantic allowlist of ``shape`` (every field defaulting to ``None``)."""
    fields = {name: (_ANNOTATIONS[kind], None) for name, kind in shape.fields.items()}
    return create_model("TypedBrief", **fields)  # type: ignore[call-overload, no-any-return]


def _tagged(text: str) -> Tag:
    tag = Tag(text)
    tag.__dict__[SECRET_PREFIX + "attr"] = "secret"
    return tag


scalar_values = st.one_of(json_scalars, st.sampled_from(list(Colour)), texts.map(_tagged))
"""Scalars as backends return them: JSON scalars, string enum members, ``str`` subclasses."""

junk_values = st.recursive(
    scalar_values,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(extra_keys, inner, min_size=1, max_size=3),
        st.dictionaries(extra_keys, inner, min_size=1, max_size=2).map(as_plain),
    ),
    max_leaves=8,
)
"""Values that try to leak: containers and objects keyed by secret names, nested."""

_sub_records = st.builds(
    lambda top, junk: {**junk, **top},
    st.fixed_dictionaries({}, optional={"a": scalar_values, "b": scalar_values}),
    extras(),
)


def _fitting(kind: str) -> st.SearchStrategy[Any]:
    if kind == "list_str":
        return st.lists(scalar_values, max_size=3)
    if kind == "dict_int":
        return st.dictionaries(identifiers, st.integers(), max_size=3)
    if kind == "model":
        return _sub_records | st.lists(_sub_records, max_size=2)
    if kind == "list_model":
        return st.lists(_sub_records, max_size=3)
    return scalar_values


def typed_records(shape: TypedShape) -> st.SearchStrategy[dict[str, Any]]:
    """Dict records for ``shape``: each field absent, fitting, or holding junk; plus extras."""
    optional = {name: _fitting(kind) | junk_values for name, kind in shape.fields.items()}
    return st.builds(
        lambda top, junk: {**junk, **top}, st.fixed_dictionaries({}, optional=optional), extras()
    )


_SCALARS = (str, int, float, bool)


def _is_scalar(value: Any) -> bool:
    return value is None or type(value) in _SCALARS


def _is_sub_brief(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) <= {"a", "b"}
        and all(map(_is_scalar, value.values()))
    )


def fits_declared(kind: str, value: Any) -> bool:
    """Whether a brief value fits the shape ``kind`` declares (a reference, written apart)."""
    if value is None:
        return True
    if kind == "list_str":
        return isinstance(value, list) and all(map(_is_scalar, value))
    if kind == "dict_int":
        return isinstance(value, dict) and all(map(_is_scalar, value.values()))
    if kind == "model":
        return _is_sub_brief(value) or (
            isinstance(value, list) and all(v is None or _is_sub_brief(v) for v in value)
        )
    if kind == "list_model":
        return isinstance(value, list) and all(v is None or _is_sub_brief(v) for v in value)
    if kind == "clip" and isinstance(value, str) and len(value) > 8:
        return False
    return _is_scalar(value)


def keys_anywhere(value: Any) -> list[Any]:
    """Every dict key at any depth of ``value``."""
    if isinstance(value, dict):
        return [k for key, inner in value.items() for k in (key, *keys_anywhere(inner))]
    if isinstance(value, list):
        return [k for inner in value for k in keys_anywhere(inner)]
    return []


# flat allowlists and complete records (the compiled projection) -------------------------

_FLAT_KINDS: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "optional_str": str | None,
    "any": Any,
    "clip": None,  # Annotated[str, Clip(n, marker)] with a drawn n and marker
    "literal": Literal["a", "b"],
}


@st.composite
def flat_allowlists(draw: st.DrawFn) -> tuple[type[BaseModel], list[str]]:
    """A flat allowlist (every field one source key, some renamed, some clipped) and its keys."""
    names = draw(st.lists(identifiers, min_size=1, max_size=6, unique=True))
    fields: dict[str, Any] = {}
    keys = []
    for name in names:
        kind = draw(st.sampled_from(sorted(_FLAT_KINDS)))
        annotation = _FLAT_KINDS[kind]
        if kind == "clip":
            marker = draw(st.sampled_from(["…", "...", ""]))
            annotation = Annotated[str, Clip(draw(st.integers(4, 30)), marker)]
        source = draw(st.sampled_from([name, f"src_{name}"]))
        keys.append(source)
        fields[name] = (annotation, Field(default=None, validation_alias=source))
    model = create_model("FlatBrief", **fields)  # type: ignore[call-overload]
    return model, keys


def complete_records(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Dict records that carry every key (the compiled path), with scalars, long texts or junk."""
    value = scalar_values | texts | st.text(min_size=20, max_size=60) | junk_values
    return st.builds(
        lambda top, junk: {**junk, **top},
        st.fixed_dictionaries(dict.fromkeys(keys, value)),
        extras(),
    )


# Texts as tools return them: line ends of every kind (``\n``, ``\r\n``, a lone ``\r``),
# tabs, lines far longer than a page, graphemes of several code points, with or without
# a final newline.
_line_bits = st.one_of(
    graphemes,
    st.sampled_from(["\n", "\r\n", "\r", "\t", " "]),
    st.text(st.sampled_from("abcXYZ0+/="), min_size=50, max_size=400),
)
page_texts = st.lists(_line_bits, max_size=60).map("".join)


# Python literals ---------------------------------------------------------------------

_literal_texts = st.text(alphabet=st.sampled_from([*"ab,'\"\\[](){}#: \n\t\r", "é", "😀"]))
_literal_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    _literal_texts,
)
literal_rows = st.lists(
    st.recursive(
        _literal_scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.tuples(inner),
            st.dictionaries(_literal_texts, inner, max_size=3),
        ),
        max_leaves=8,
    ),
    max_size=8,
)
"""Lists whose ``str()`` is what a server sends: quotes, brackets, commas and ``#`` in texts."""


# redaction ---------------------------------------------------------------------------

SECRET_KEYS = ["password", "Password", "PASSWORD", "db_password", "pwd", "token", "api_key"]
"""Keys the redaction table reads as naming a secret."""

_key_separators = st.sampled_from([": ", ":", "=", " = ", ":\t"])
_error_words = [w for w in PROSE_WORDS if len(w) > 2] + ["at", "least", "8", "characters"]

prose_after_key = st.builds(
    lambda key, sep, first, rest, end: f"{key}{sep}{first}{end} {' '.join(rest)}".rstrip(),
    st.sampled_from(SECRET_KEYS),
    _key_separators,
    st.sampled_from(PROSE_WORDS).map(lambda w: w.capitalize() if len(w) % 2 else w),
    st.lists(st.sampled_from(_error_words), max_size=5),
    st.sampled_from(["", ".", "!", ":"]),
)
"""An error phrase: a secret's key, then English words from the prose list ("password:
required", "token: Expired. must be reset")."""

_secret_chars = string.ascii_letters + string.digits + "!#$%*+./=?@^_~-"
secret_values = st.text(alphabet=_secret_chars, min_size=1, max_size=40).filter(
    lambda v: not re.fullmatch(rf"(?i)(?:{'|'.join(PROSE_WORDS)})[.!?:]*", v)
)
"""An unquoted value a password could be: any run of letters, digits and symbols that is
not a word of the prose list."""

quoted_values = st.text(alphabet=_secret_chars + " ,;", max_size=30).map(lambda v: f'"{v}"')
"""A double-quoted value, prose words included: always a value, never prose."""


# exact JSON numbers ------------------------------------------------------------------

_ORJSON_EDGES = [-(2**63) - 1, -(2**63), 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(10**19), 10**19]
"""Where orjson stops reading integers exactly (-2**63 to 2**64 - 1), and either side."""

long_integers = st.one_of(
    st.sampled_from(_ORJSON_EDGES).flatmap(lambda n: st.integers(n - 3, n + 3)),
    st.integers(-(10**25), 10**25),
    st.integers(),
)
"""Integers of 18 to 25 digits and beyond, either sign, many just past orjson's range."""

digit_runs = st.text(alphabet=st.sampled_from([*"0123456789", *"abcdef", " ", "-", ":", ","]))
"""Strings full of digit runs (hex digests, numbered prose) that must stay strings."""

long_number_json = st.recursive(
    st.one_of(long_integers, digit_runs, json_scalars),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(identifiers, inner, max_size=4)
    ),
    max_leaves=12,
)
"""JSON values where long integers and digit-heavy strings sit at every depth."""

json_layouts = st.sampled_from(
    [{}, {"separators": (",", ":")}, {"indent": 2}, {"indent": "\t"}, {"ensure_ascii": False}]
)
"""How ``json.dumps`` may lay the same value out (spaces, tabs, newlines before a number)."""

"""``slimtools suggest``: a proposed allowlist from sample results, for the user to edit.

It picks the list path, keeps ids, names, titles, states, dates and counts, clips long texts,
keeps only the login of nested owner/actor objects and the name of nested records, and drops
URL templates, node ids and everything else (listed in a comment, so adding one back is an
edit). The token ratio it prints is measured by running the samples through the same
decorators the proxy would use.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slimtools._json import dumps_str
from slimtools._text import line_count
from slimtools.errors import ConfigurationError
from slimtools.foreign import PAGE_TOKENS, Plan, slim
from slimtools.proxy.config import ToolOptions, parse_config
from slimtools.tokens import count_tokens

__all__ = ["Suggestion", "load_samples", "render", "suggest"]

_IDS = ("id", "number", "sha", "key", "uuid")
_NAMES = ("name", "full_name", "login", "title", "path", "ref", "label", "filename")
_STATES = ("state", "status", "conclusion", "merged", "draft", "locked", "archived", "private")
_KINDS = ("type", "kind", "category", "entitytype", "relationtype")
"""Short fields that say what a record is (``directory_tree``'s ``type``, a graph's kinds)."""
_REFS = ("from", "to", "source", "target", "parent")
"""Fields that name the records a record links (a graph's relations)."""
_COUNTS = ("comments", "additions", "deletions", "changed_files", "size", "count")
_TEXTS = ("description", "message", "body", "summary", "text")
_SUBNAMES = ("login", "name", "title", "ref", "total_count")
_ACTORS = ("user", "owner", "actor", "author", "committer", "assignee", "sender", "creator")
_MAX_LIMIT = 100  # a config's default max_limit
_CLIP_OVER = 200
_CLIP_TO = 160


@dataclass
class Suggestion:
    """A proposed ``[tools.NAME]`` block and what it achieves on the samples."""

    tool: str
    items: str | None
    fields: list[str]
    key: str | None
    limit: int
    dropped: dict[str, list[str]] = field(default_factory=dict)
    records: int = 0
    samples: int = 0
    raw_tokens: int = 0
    envelope_tokens: int = 0
    types: dict[str, str] = field(default_factory=dict)

    def toml(self) -> str:
        """The block as TOML (without comments)."""
        lines = [f"[tools.{_toml_key(self.tool)}]"]
        if self.items:
            lines.append(f"items = {json.dumps(self.items)}")
        if self.fields:
            lines.append("fields = [" + ", ".join(json.dumps(f) for f in self.fields) + "]")
        if self.key:
            lines.append(f"key = {json.dumps(self.key)}")
        lines.append(f"limit = {self.limit}")
        if self.limit > _MAX_LIMIT:
            lines.append(f"max_limit = {self.limit}")
        return "\n".join(lines)

    def options(self) -> ToolOptions:
        """The block parsed back through the config validator (so it is known valid)."""
        found = parse_config(self.toml(), "<suggestion>").options_for(self.tool)
        assert found is not None
        return found


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def load_samples(paths: Sequence[str]) -> list[Any]:
    """Each file's JSON (or its text when it is not JSON)."""
    samples = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(f"{path}: cannot read the sample: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigurationError(
                f"{path}: the sample is not UTF-8 text (byte {exc.start}); give a JSON or "
                "text result as the tool returns it"
            ) from None
        try:
            samples.append(json.loads(text))
        except json.JSONDecodeError:
            samples.append(text)
        except RecursionError:
            raise ConfigurationError(
                f"{path}: the sample's JSON nests deeper than can be read"
            ) from None
    return samples


def _list_path(data: Any, prefix: str = "", depth: int = 0) -> tuple[str | None, list[Any]]:
    """The dotted path of the longest list of records inside ``data`` (None: data itself)."""
    if isinstance(data, list):
        return None, data
    best: tuple[str | None, list[Any]] = (None, [])
    if not isinstance(data, dict) or depth > 2:
        return best
    if depth == 0 and _several_lists(data):
        return best  # several lists (a graph's entities and relations): the dict is the record
    for key, value in data.items():
        path = f"{prefix}{key}"
        if _is_record_list(value):
            found: tuple[str | None, list[Any]] = (path, value)
        elif isinstance(value, dict):
            found = _list_path(value, path + ".", depth + 1)
        else:
            continue
        if len(found[1]) > len(best[1]):
            best = found
    return best


def _several_lists(data: dict[str, Any]) -> bool:
    return sum(_is_record_list(v) for v in data.values()) > 1


def _is_record_list(value: Any) -> bool:
    return isinstance(value, list) and sum(isinstance(v, dict) for v in value) * 2 > len(value)


def _verdict(key: str, values: list[Any], *, expand: bool = False) -> tuple[str | None, str]:
    """The field entry to keep for ``key`` (or None) and the reason."""
    present = [v for v in values if v is not None]
    low = key.lower()
    if low == "url" or low.endswith(("_url", "_urls")):
        return None, "URL templates"
    if low == "node_id" or low.endswith("_node_id") or low == "gravatar_id":
        return None, "node ids"
    if not present:
        return None, "always empty"
    if all(isinstance(v, dict) for v in present):
        sub = _name_subfield(present)
        if sub is not None:
            kind = "owner/actor objects" if low in _ACTORS or sub == "login" else "objects"
            return f"{key} = {key}.{sub}", f"nested {kind} ({sub} kept)"
        return None, "nested objects"
    if all(isinstance(v, list) for v in present):
        records = [x for v in present for x in v if isinstance(x, dict)]
        if not any(present):
            return None, "always empty"
        if records and expand:
            return _nested_list(key, records)
        if records:
            sub = _name_subfield(records)
            return (f"{key}.{sub}", f"nested lists ({sub} kept)") if sub else (None, "lists")
        short = statistics.median(len(dumps_str(v)) for v in present) <= 80
        return (key, "short lists") if short else (None, "long lists")
    if all(isinstance(v, str) for v in present):
        long = statistics.median(len(v) for v in present) > _CLIP_OVER
        if long:
            return f"{key}:{_CLIP_TO}", "long texts (clipped)"
        if low in _TEXTS:
            return key, "kept"
    if _is_kept(low, present):
        return key, "kept"
    return None, "other fields"


def _nested_list(key: str, records: list[dict[str, Any]]) -> tuple[str | None, str]:
    """The fields kept of a list of nested records, as ``key.sub`` entries joined by ``|``.

    Each sub-field is judged as a top-level one would be (renames and deeper nesting
    aside); with none kept, the name-like sub-field alone.
    """
    subs: dict[str, list[Any]] = {}
    for record in records:
        for sub, value in record.items():
            subs.setdefault(sub, []).append(value)
    kept = []
    for sub, values in subs.items():
        entry, _ = _verdict(sub, values)
        if entry is not None and " = " not in entry and "." not in entry:
            kept.append(f"{key}.{entry}")
    if kept:
        return "|".join(kept), f"nested lists ({', '.join(e.split('.', 1)[1] for e in kept)} kept)"
    name = _name_subfield(records)
    return (f"{key}.{name}", f"nested lists ({name} kept)") if name else (None, "lists")


def _is_kept(low: str, values: list[Any]) -> bool:
    if low in _IDS or low in _NAMES or low in _STATES or low in _COUNTS or low in _REFS:
        return True
    if _is_kind(low) and all(isinstance(v, str) and len(v) <= 40 for v in values):
        return True
    if low.endswith(("_at", "_count", "_date")) or low == "date":
        return True
    return all(isinstance(v, str) and re.match(r"\d{4}-\d\d-\d\dT", v) for v in values)


def _is_kind(low: str) -> bool:
    return low in _KINDS or low.endswith(("_type", "_kind"))


def _name_subfield(objects: list[dict[str, Any]]) -> str | None:
    for sub in _SUBNAMES:
        if sum(sub in o for o in objects) * 2 > len(objects):
            return sub
    return None


def suggest(
    samples: Sequence[Any], *, tool: str = "TOOL", limit: int = 10, measure: bool = True
) -> Suggestion:
    """A proposed allowlist for ``tool`` from sample results, with its measured ratio.

    Text samples (every sample a string) get a block that pages them by lines, about
    ``PAGE_TOKENS`` a page. ``measure=False`` skips running the samples through the
    decorators (the proxy's automatic briefs need only the fields).

    Raises:
        ConfigurationError: no sample holds a record, a list of records or a text.
    """
    if samples and all(isinstance(s, str) for s in samples):
        return _suggest_text(samples, tool, measure=measure)
    items: str | None = None
    records: list[dict[str, Any]] = []
    for sample in samples:
        path, found = _list_path(sample)
        if path is not None:
            items = items or path
        records += [r for r in found if isinstance(r, dict)]
        if isinstance(sample, dict) and not found:
            records.append(sample)
    if not records:
        raise ConfigurationError("no sample holds a record, a list of records or a text to page")
    keys: dict[str, list[Any]] = {}
    for record in records:
        for key, value in record.items():
            keys.setdefault(key, []).append(value)
    if not keys:  # only empty records ({}): no field to propose
        raise ConfigurationError("no sample holds a record, a list of records or a text to page")
    fields: list[str] = []
    dropped: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    # A dict of several lists is one record whose lists each keep their own fields; a
    # list nested in an ordinary record keeps only its name-like field.
    expand = any(isinstance(s, dict) and _several_lists(s) for s in samples)
    for key, values in keys.items():
        entry, reason = _verdict(key, values, expand=expand)
        if entry is None:
            dropped.setdefault(reason, []).append(key)
            continue
        fields += entry.split("|")
        if reason != "kept" and not reason.startswith("long texts"):
            dropped.setdefault(reason, []).append(key)
        types[entry] = _type_of(values)
    if not fields:
        fields = [next(iter(keys))]
    handle = next(
        (
            k
            for k in _IDS
            if k in fields and len({dumps_str(r.get(k)) for r in records}) == len(records)
        ),
        None,
    )
    result = Suggestion(tool, items, fields, handle, limit, dropped, len(records), len(samples))
    result.types = types
    if measure:
        _measure(result, samples)
    return result


def _suggest_text(samples: Sequence[str], tool: str, *, measure: bool) -> Suggestion:
    """Lines per page for a text tool: as many as make a page of about ``PAGE_TOKENS``."""
    lines = sum(line_count(s) for s in samples)
    per_line = sum(count_tokens(s) for s in samples) / max(1, lines)
    limit = min(1_000, max(20, int(PAGE_TOKENS / max(1.0, per_line))))
    result = Suggestion(tool, None, [], None, limit, records=lines, samples=len(samples))
    if measure:
        _measure(result, samples)
    return result


def _type_of(values: list[Any]) -> str:
    kinds = {type(v).__name__ for v in values if v is not None}
    names = {"str": "str", "int": "int", "float": "float", "bool": "bool"}
    base = names[next(iter(kinds))] if len(kinds) == 1 and next(iter(kinds)) in names else "Any"
    return base + (" | None" if any(v is None for v in values) and base != "Any" else "")


def _measure(result: Suggestion, samples: Sequence[Any]) -> None:
    """Run every sample through the suggested decorators; sum raw and envelope tokens."""
    plan = Plan(result.options(), None)
    for sample in samples:
        tool = slim(lambda _sample=sample, **_: _sample, plan, name=result.tool)
        result.raw_tokens += count_tokens(dumps_str(sample))
        result.envelope_tokens += count_tokens(str(tool()))


def render(result: Suggestion, *, fmt: str = "toml") -> str:
    """The suggestion as a commented TOML block or a Pydantic ``Brief`` model."""
    ratio = result.raw_tokens / result.envelope_tokens if result.envelope_tokens else 0.0
    where = f'at "{result.items}"' if result.items else "at the top level"
    if not result.fields:
        where = "of text: paged by lines"
    head = [
        f"# slimtools suggest: {result.samples} sample(s), {result.records} "
        f"{'lines' if not result.fields else 'records'} {where}",
        f"# on the samples: {result.raw_tokens:,} raw tokens -> {result.envelope_tokens:,} in "
        f"the first page's envelope ({ratio:.1f}x smaller)",
    ]
    for reason, keys in result.dropped.items():
        head.append(f"# {reason}: {', '.join(keys)}")
    if fmt == "model":
        return "\n".join([*head, "", *_model_lines(result)])
    return "\n".join([*head, result.toml()])


def _model_lines(result: Suggestion) -> list[str]:
    name = "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", result.tool) if p) + "Brief"
    lines = [
        "from typing import Annotated, Any",
        "",
        "from pydantic import AliasPath, BaseModel, Field",
        "",
        "from slimtools import Clip",
        "",
    ]
    body: list[str] = []
    subs: dict[str, list[str]] = {}
    for entry in result.fields:
        annotation = result.types.get(entry, "Any")
        if " = " in entry:
            out, path = (p.strip() for p in entry.split(" = ", 1))
            alias = ", ".join(json.dumps(p) for p in path.split("."))
            body.append(
                f"    {out}: Any = Field(default=None, validation_alias=AliasPath({alias}))"
            )
        elif ":" in entry:
            out, clip = entry.split(":", 1)
            body.append(f"    {out}: Annotated[str, Clip({clip})] | None = None")
        elif "." in entry:
            head, rest = entry.split(".", 1)
            subs.setdefault(head, []).append(rest)
        else:
            body.append(
                f"    {entry}: {annotation} = None"
                if "None" in annotation
                else f"    {entry}: {annotation}"
            )
    for head, rests in subs.items():
        sub = head.capitalize() + "Item"
        lines += [f"class {sub}(BaseModel):", *[f"    {r}: Any = None" for r in rests], "", ""]
        body.append(f"    {head}: list[{sub}] | None = None")
    return [
        *lines,
        f"class {name}(BaseModel):",
        f'    """What the model sees of one {result.tool} record."""',
        "",
        *body,
    ]

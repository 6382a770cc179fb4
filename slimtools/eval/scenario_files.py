"""Scenario files: a user's own recall scenario as JSON or TOML, validated field by field.

The format (documented in the README): ``name``, ``description``, optional ``system``, ``task``,
``rounds`` (each ``tool``, ``args``, ``result``, optional ``say`` and ``records``), optional
``tools`` and ``question`` (``round``, ``text``, ``answer``, ``check``, ``pattern``). Errors
name the file and the field (``rounds[1].result: Field required``).
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slimtools import ToolResult
from slimtools._json import dumps_str
from slimtools.errors import ConfigurationError
from slimtools.eval.checks import AnswerCheck
from slimtools.eval.scenarios import (
    DEFAULT_SYSTEM,
    Episode,
    Question,
    Round,
    ScenarioError,
    Serve,
    ToolDef,
    validate_episode,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ToolModel(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class _RoundModel(_Strict):
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    result: str = Field(min_length=1)
    say: str = ""
    records: dict[str, Any] = Field(default_factory=dict)


class _QuestionModel(_Strict):
    round: int = Field(ge=1)
    text: str = Field(min_length=1)
    answer: str | int
    check: Literal["timestamp", "integer", "id", "regex"]
    pattern: str | None = None


class _FileModel(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    system: str = DEFAULT_SYSTEM
    task: str = Field(min_length=1)
    tools: list[_ToolModel] = Field(default_factory=list)
    rounds: list[_RoundModel] = Field(min_length=2)
    question: _QuestionModel


@dataclass(frozen=True)
class FileScenario:
    """A scenario read from a file; repeat 0 plays the rounds as written, each later repeat
    a different ordering of the rounds other than the target (which keeps its place)."""

    name: str
    description: str
    base: Episode
    records: Mapping[str, Any]

    def episode(self, repeat: int, *, seed: int = 0, rounds: int = 10, target: int = 3) -> Episode:
        """The file's episode; ``rounds`` and ``target`` are the file's own (ignored here)."""
        if repeat == 0:
            return self.base
        played = list(self.base.rounds)
        index = self.base.question.round - 1
        others = [r for i, r in enumerate(played) if i != index]
        random.Random(f"{self.name}:{seed}:{repeat}").shuffle(others)
        others.insert(index, played[index])
        return replace(self.base, repeat=repeat, rounds=tuple(others))


def load_scenario(path: str | Path) -> FileScenario:
    """Read and validate a scenario file (``.json`` or ``.toml``).

    Raises:
        ScenarioError: the file cannot be read or parsed, or a field is missing or wrong;
            the message names the file and the field (``rounds[2].result``).
    """
    path = Path(path)
    source = str(path)
    data = _read(path)
    try:
        model = _FileModel.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{source}: {_describe(exc)}") from None
    try:
        check = AnswerCheck(
            model.question.check, str(model.question.answer), model.question.pattern
        )
    except ConfigurationError as exc:
        raise ScenarioError(f"{source}: question: {exc}") from None
    rounds = tuple(Round(r.tool, r.args, r.result, r.say) for r in model.rounds)
    records: dict[str, Any] = {}
    for r in model.rounds:
        records.update(r.records)
    tools = _tools(model, records, source)
    base = Episode(
        scenario=model.name,
        repeat=0,
        system=model.system,
        task=model.task,
        tools=tools,
        rounds=rounds,
        question=Question(model.question.round, model.question.text, check),
        serve=_file_server(rounds, records),
        refetch_tool="get_record" if records else None,
    )
    validate_episode(base, source)
    return FileScenario(model.name, model.description, base, records)


def _read(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".toml":
        return _toml(raw, path)
    if path.suffix.lower() != ".json":
        raise ScenarioError(f"{path}: a scenario file must end in .json or .toml")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ScenarioError(f"{path}: not valid JSON: {exc}") from None


def _toml(raw: bytes, path: Path) -> Any:
    """Parse TOML with ``tomllib`` (Python 3.11+) or ``tomli``, whichever is there."""
    for name in ("tomllib", "tomli"):
        try:
            module: Any = importlib.import_module(name)
        except ImportError:
            continue
        try:
            return module.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, module.TOMLDecodeError) as exc:
            raise ScenarioError(f"{path}: not valid TOML: {exc}") from None
    raise ScenarioError(
        f"{path}: TOML scenarios need Python 3.11+ or `pip install tomli`; or write it as JSON"
    )


def _describe(exc: ValidationError) -> str:
    """Pydantic's errors as ``rounds[2].result: Field required; ...``."""
    parts = []
    for error in exc.errors():
        where = ""
        for key in error["loc"]:
            where += f"[{key}]" if isinstance(key, int) else (f".{key}" if where else str(key))
        parts.append(f"{where or 'file'}: {error['msg']}")
    return "; ".join(parts)


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
)
_JSON_TYPES += ((list, "array"), (dict, "object"))


def _tools(model: _FileModel, records: Mapping[str, Any], source: str) -> tuple[ToolDef, ...]:
    """The declared tools, or ones derived from the rounds' arguments; ``get_record`` too."""
    if model.tools:
        tools = [ToolDef(t.name, t.description, t.parameters) for t in model.tools]
        names = {t.name for t in tools}
        for i, r in enumerate(model.rounds):
            if r.tool not in names:
                raise ScenarioError(
                    f"{source}: rounds[{i}].tool: {r.tool!r} is not among the declared tools "
                    f"{sorted(names)}"
                )
    else:
        tools = []
        for name in dict.fromkeys(r.tool for r in model.rounds):
            calls = [r.args for r in model.rounds if r.tool == name]
            properties = {
                key: {"type": _json_type(value)} for args in calls for key, value in args.items()
            }
            required = sorted(k for k in properties if all(k in args for args in calls))
            schema = {"type": "object", "properties": properties, "required": required}
            tools.append(ToolDef(name, name.replace("_", " "), schema))
    if records and "get_record" not in {t.name for t in tools}:
        schema = {
            "type": "object",
            "properties": {"handle": {"type": ["string", "integer"]}},
            "required": ["handle"],
        }
        tools.append(ToolDef("get_record", "Return the full record behind a handle.", schema))
    return tuple(tools)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "string")


def _file_server(rounds: Sequence[Round], records: Mapping[str, Any]) -> Serve:
    """Serve a call from the recorded rounds: the same tool with agreeing arguments."""

    def serve(name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        args = _arguments(arguments)
        if args is None:
            return ToolResult(f"Invalid arguments for {name}: expected a JSON object.", True)
        if name == "get_record" and records:
            handle = str(args.get("handle", ""))
            if handle in records:
                value = records[handle]
                return ToolResult(value if isinstance(value, str) else dumps_str(value))
            return ToolResult(f"No record {handle!r}: call the tool that showed it again.", True)
        same_tool = [r for r in rounds if r.tool == name]
        if not same_tool:
            known = sorted({r.tool for r in rounds} | ({"get_record"} if records else set()))
            return ToolResult(f"Unknown tool {name!r}. Available tools: {', '.join(known)}.", True)
        for r in reversed(same_tool):  # the latest recorded result of an agreeing call wins
            if all(r.args[k] == v for k, v in args.items() if k in r.args):
                return ToolResult(r.result)
        recorded = "; ".join(f"{name}({dumps_str(r.args)})" for r in same_tool)
        return ToolResult(
            f"No recorded result for {name}({dumps_str(args)}); recorded: {recorded}.", True
        )

    return serve


def _arguments(arguments: str | Mapping[str, Any]) -> dict[str, Any] | None:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, dict) else None

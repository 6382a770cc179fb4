"""The proxy config file's schema: global settings over the ``[tools.NAME]`` tables.

A Pydantic model with ``extra="forbid"``; each tool's table is ``slimtools.foreign``'s
``ToolTable``, so the keys, types and messages of both come from one declaration.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationInfo,
    field_validator,
)

from slimtools.foreign import SchemaError, Text, ToolTable

__all__ = ["ConfigFile"]


class ConfigFile(BaseModel):
    """The whole TOML file: global settings, then the ``[tools.NAME]`` tables in file order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: StrictInt | StrictBool | None = Field(
        None, description="a positive integer, or 0/false for none"
    )
    store: Text | None = Field(None, description="a non-empty string")
    session: Text | None = Field(None, description="a non-empty string")
    companion: Text = Field("get_record", description="a non-empty string")
    name: Text = Field("proxy", description="a non-empty string")
    auto_briefs: StrictInt | StrictBool | None = Field(
        None, description="a positive integer, or 0/false for none"
    )
    emit: Literal["both", "text", "structured"] | None = Field(
        None, description='"both", "text" or "structured"'
    )
    call_timeout: StrictInt | StrictFloat | StrictBool | None = Field(
        None, description="a positive number of seconds, or 0/false for none"
    )
    tools: dict[str, ToolTable] = Field({}, description="a table of [tools.NAME] tables")

    @field_validator("max_tokens", "auto_briefs")
    @classmethod
    def _budget(cls, value: int | bool | None, info: ValidationInfo) -> int | bool | None:
        if value is True or (isinstance(value, int) and not isinstance(value, bool) and value < 0):
            raise SchemaError(
                f"must be a positive integer, or 0/false for none, got {value!r}",
                str(info.field_name),
            )
        return value

    @field_validator("call_timeout")
    @classmethod
    def _seconds(cls, value: float | bool | None, info: ValidationInfo) -> float | bool | None:
        if value is True or (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and not 0 <= value < math.inf  # nan and inf fail too
        ):
            raise SchemaError(
                f"must be a positive number of seconds, or 0/false for none, got {value!r}",
                str(info.field_name),
            )
        return value

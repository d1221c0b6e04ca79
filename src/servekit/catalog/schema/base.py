"""Shared building blocks of the catalog schema.

Every catalog model derives from ``Spec``: unknown keys are kept (``model_extra``) so a newer
catalog still loads, and the validator reports them as warnings. A key written but left empty
(``features:`` with nothing under it) counts as absent, as the public site reads it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, model_validator

Args = list[StrictStr]
"""Command-line arguments: each item is one argv word, always a string."""

EnvValue = StrictStr | StrictInt
"""An environment value. Whole numbers are accepted; booleans and decimals must be quoted."""

Env = dict[str, EnvValue]

PositiveInt = Annotated[StrictInt, Field(ge=1)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]
NonNegativeNumber = Annotated[StrictInt | StrictFloat, Field(ge=0)]

SupportMark = Literal["supported", "unsupported"]
"""Per-hardware switch: ``unsupported`` disables the thing there (absent = assumed to work)."""

VersionText = StrictStr
"""A vLLM version such as ``"0.17.0"``; checked with packaging.version by the validator."""


class Spec(BaseModel):
    """Base of every catalog model: keeps unknown keys, treats empty keys as absent."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_absent(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        drop = [
            key
            for key, value in data.items()
            if value is None and key in cls.model_fields and not cls.model_fields[key].is_required()
        ]
        if not drop:
            return data
        return {k: v for k, v in data.items() if k not in drop}


class Companion(Spec):
    """A helper process shown next to ``vllm serve`` (its own terminal tab)."""

    label: StrictStr
    description: StrictStr | None = None
    command: StrictStr


FreeForm = dict[str, Any]
"""A mapping whose keys are not part of the schema (passed through verbatim)."""

"""What one field of a pydantic config dataclass takes, measured with the field's own validator.

Run inside an engine's environment (pydantic and pydantic-core come with the engine). Each field's
core schema (``cls.__pydantic_core_schema__``: its type, constraints and every field validator
the class declares for it) is compiled alone with ``pydantic_core.SchemaValidator``, so a value is
judged as the class judges that field, without building the class (whose ``__post_init__`` may
reach for models or devices). Any exception the field's validator raises is a refusal (vLLM's own
validators raise KeyError or ValueError as well as ValidationError).

Per field this gives: ``type`` (the annotation in words), ``kinds`` (the JSON kinds it takes),
``choices`` (a Literal's values, an Enum's member names), ``strings`` (which spellings of those
choices, and of a few common words, it takes), ``numbers`` (the whole numbers a choice field
takes, when it takes only some), ``bounds`` (gt/ge/lt/le of a number field) and ``items`` (the
kinds a list of plain values holds).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any

# One or a few JSON values of each kind; what a field takes is measured with them.
KIND_SAMPLES: dict[str, list[Any]] = {
    "null": [None], "bool": [True, False], "int": [3, 0, 1], "float": [1.5], "str": ["x"], "numstr": ["3"],
    "list": [[]], "dict": [{}],
}
SPECIAL_STRINGS = ["auto", "none", "None", "all", "", "true", "false", "True", "False", "yes", "no", "on", "off"]
SCALARS = {int: "int", float: "float", str: "str", bool: "bool"}
BOUNDS = ("gt", "ge", "lt", "le")
UNLIKELY_NUMBER = 987654321  # a whole number no choice field lists


def field_schemas(cls: Any) -> dict[str, dict[str, Any]]:
    """Field name -> its core schema, wrapped with the class's definitions; {} when it has none."""
    schema = getattr(cls, "__pydantic_core_schema__", None)
    definitions: list[dict[str, Any]] = []
    while isinstance(schema, dict):
        kind = schema["type"]
        if kind == "definitions":
            definitions += schema["definitions"]
            schema = schema["schema"]
        elif kind == "definition-ref":
            schema = next(d for d in definitions if d.get("ref") == schema["schema_ref"])
        elif kind == "dataclass-args":
            return {f["name"]: ({"type": "definitions", "schema": f["schema"], "definitions": definitions}
                                if definitions else f["schema"]) for f in schema["fields"]}
        elif "schema" in schema:  # the dataclass itself, or a model validator around it
            schema = schema["schema"]
        else:
            return {}
    return {}


class Field:
    """One field's validator: ``takes(value)`` as vLLM meets it (JSON text at parse, a dict at startup)."""

    def __init__(self, schema: dict[str, Any], stage: str) -> None:
        from pydantic_core import SchemaValidator

        self.validator = SchemaValidator(schema)
        self.schema = schema
        self.stage = stage

    def takes(self, value: Any) -> bool:
        try:
            if self.stage == "parse":
                self.validator.validate_json(json.dumps(value))
            else:
                self.validator.validate_python(value)
        except Exception:  # noqa: BLE001 - the field's validator refused it, whatever it raised
            return False
        return True


def choice_groups(hint: Any) -> list[tuple[list[Any], list[Any]]]:
    """Per Literal or Enum anywhere in the annotation: (its values or member names, the Enum's values)."""
    out: list[tuple[list[Any], list[Any]]] = []
    stack = [hint]
    while stack:
        item = stack.pop()
        if typing.get_origin(item) is typing.Literal:
            out.append(([a for a in typing.get_args(item) if isinstance(a, (str, int)) and not isinstance(a, bool)], []))
        elif isinstance(item, type) and issubclass(item, enum.Enum):
            out.append((list(item.__members__), [m.value for m in item if isinstance(m.value, (str, int))]))
        else:
            stack.extend(reversed(typing.get_args(item)))
    return out


def taken_choices(field: Field, hint: Any) -> list[Any]:
    """The choices the field takes as written: a Literal's values, an Enum's names (its values where
    the names are refused)."""
    out: list[Any] = []
    for names, values in choice_groups(hint):
        out += [n for n in names if field.takes(n)] or [v for v in values if field.takes(v)]
    return list(dict.fromkeys(out))


def type_text(hint: Any) -> str:
    """The annotation in the words a message uses: int, float or null, one of its choices, list of int."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None):
        return "null"
    if hint in SCALARS:
        return SCALARS[hint]
    if origin is typing.Literal or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        return "one of its choices"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(type_text(a) for a in args))
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set):
        inner = [a for a in args if a is not Ellipsis]
        return f"list of {type_text(inner[0])}" if len(set(inner)) == 1 else "list"
    if origin is dict or hint is dict:
        return "object"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"object ({hint.__name__})"
    if origin is typing.Annotated:
        return type_text(args[0])
    return "any value" if hint is typing.Any else getattr(hint, "__name__", str(hint))


def item_type(hint: Any) -> Any:
    """The plain element type of ``list[T]`` / ``tuple[T, ...]`` / ``set[T]`` (optional or not), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        found = [item_type(a) for a in typing.get_args(hint) if a is not type(None)]
        return found[0] if len(found) == 1 else None
    args = [a for a in typing.get_args(hint) if a is not Ellipsis]
    if typing.get_origin(hint) in (list, tuple, set, frozenset) and len(set(args)) == 1 and args[0] in SCALARS:
        return args[0]
    return None


def bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """gt/ge/lt/le of a field whose schema is one int or float (through defaults and nullable)."""
    while schema.get("type") in ("definitions", "default", "nullable"):
        schema = schema["schema"]
    if schema.get("type") not in ("int", "float"):
        return {}
    return {key: schema[key] for key in BOUNDS if key in schema}


def field_entry(field: Field, hint: Any) -> dict[str, Any] | None:
    """What the field takes, or None when its validator refuses every sample (it needs the other fields)."""
    kinds = [kind for kind, values in KIND_SAMPLES.items() if any(field.takes(v) for v in values)]
    choices = taken_choices(field, hint)
    candidates = [str(c) for names, values in choice_groups(hint) for c in (*names, *values)] + SPECIAL_STRINGS
    variants = [c for base in candidates for c in (base, base.lower(), base.upper())]
    strings = [] if "str" in kinds else [c for c in dict.fromkeys(variants) if field.takes(c)]
    if not kinds and not strings:
        return None
    entry: dict[str, Any] = {"type": type_text(hint), "kinds": kinds}
    entry.update({"choices": choices} if choices else {})
    entry.update({"strings": strings} if strings else {})
    entry.update({"bounds": found} if (found := bounds(field.schema)) else {})
    entry.update({"numbers": found} if (found := numbers(field, hint, kinds)) else {})
    inner = item_type(hint)
    if inner is not None and "list" in kinds:
        entry["items"] = [kind for kind, values in KIND_SAMPLES.items() if kind not in ("list", "dict")
                          and any(field.takes([v]) for v in values)]
    return entry


def numbers(field: Field, hint: Any, kinds: list[str]) -> list[int]:
    """The whole numbers a choice field takes (an IntEnum's values, a Literal's integers), when it takes
    whole numbers but not any whole number."""
    if "int" not in kinds or not choice_groups(hint) or field.takes(UNLIKELY_NUMBER):
        return []
    return [v for names, values in choice_groups(hint) for v in (*names, *values)
            if isinstance(v, int) and not isinstance(v, bool) and field.takes(v)]


def measured_fields(cls: Any, stage: str) -> dict[str, dict[str, Any]]:
    """Field name -> what it takes, for every field whose validator can be compiled alone."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable annotations: types are named by the schema only
        hints = {}
    out: dict[str, dict[str, Any]] = {}
    for name, schema in field_schemas(cls).items():
        try:
            field = Field(schema, stage)
        except Exception:  # noqa: BLE001 - a schema that does not compile alone: nothing measured
            continue
        entry = field_entry(field, hints.get(name, typing.Any))
        if entry is not None:
            out[name] = entry
    return out

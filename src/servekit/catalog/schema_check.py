"""Validate one document against its pydantic model and phrase every problem for a person.

Each pydantic error location is resolved against the actual data, so union-member labels
(``str``, ``dict[str,str]``) drop out and the remaining key path can be looked up for a line
number. Unknown keys are found by walking the data alongside the model's field annotations,
independently of whether validation succeeded, so one run reports everything.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from servekit.catalog.issues import error, warning
from servekit.catalog.positioned import KeyPath
from servekit.catalog.spaced_args import split_spaced_flag
from servekit.findings import Finding

_KIND_WORDS = {
    "string_type": "a string",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a mapping (key: value lines)",
    "model_type": "a mapping (key: value lines)",
    "model_attributes_type": "a mapping (key: value lines)",
    "list_type": "a list",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date (YYYY-MM-DD)",
}


def _describe_value(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if value is None:
        return "nothing (empty value)"
    if isinstance(value, (int, float)):
        return f"number {value}"
    text = str(value)
    return f"'{text[:60]}…'" if len(text) > 60 else f"'{text}'"


def resolve(loc: tuple, data: Any) -> tuple[KeyPath, str | None]:
    """Keep only the parts of a pydantic loc that exist in the data; also return the last
    field name that did not (a missing key's name)."""
    path: list[str | int] = []
    missing: str | None = None
    current = data
    for part in loc:
        if isinstance(current, dict) and isinstance(part, str) and part in current:
            path.append(part)
            current = current[part]
            missing = None
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
            missing = None
        elif isinstance(part, str):
            missing = part
    return tuple(path), missing


def _expected_words(err: dict) -> str:
    if err["type"] == "literal_error":
        expected = str(err.get("ctx", {}).get("expected", "a listed value"))
        return expected.replace("False", "false").replace("True", "true")
    return _KIND_WORDS.get(err["type"], err["msg"].lower())


def _fix_for(kind: str, expected: str, key: str, value: Any) -> str:
    if kind == "string_type" and isinstance(value, (dict, list)):
        return f"write {key} as one text value, not {_describe_value(value)}"
    if kind == "string_type":
        return f"quote the value of {key} so YAML reads it as text"
    if kind in {"dict_type", "model_type", "model_attributes_type"}:
        return f"write {key} as a mapping of 'name: value' lines"
    if kind == "list_type":
        return f"write {key} as a list ('- item' lines or [a, b])"
    return f"change {key} to {expected}"


def _issue_for(group: list[dict], path: KeyPath, value: Any) -> Finding:
    key = ".".join(str(p) for p in path) or "the document"
    first = group[0]
    kind = first["type"]
    if kind == "missing":
        field = first["_missing"] or "a required key"
        where = f"{key}" if path else "the top level"
        return error(
            path + (field,),
            f"required key '{field}' is missing",
            f"add '{field}:' under {where}",
            "missing-key",
            at_key=True,
        )
    if kind == "literal_error" and len(group) == 1:
        allowed = first.get("ctx", {}).get("expected", "")
        return error(
            path,
            f"{_describe_value(value)} is not allowed; expected {allowed}",
            f"use one of {allowed}",
            "bad-value",
        )
    if kind in {"greater_than_equal", "greater_than", "less_than_equal", "less_than"} and len(group) == 1:
        return error(
            path,
            f"{_describe_value(value)} is out of range: {first['msg'].lower()}",
            f"change {key} to a value that is {first['msg'].lower().removeprefix('input should be ')}",
            "bad-value",
        )
    expected = sorted({_expected_words(e) for e in group})
    expected_text = " or ".join(expected)
    if kind in _KIND_WORDS or len(group) > 1:
        return error(
            path,
            f"expected {expected_text}, got {_describe_value(value)}",
            _fix_for(kind, expected_text, key, value),
            "wrong-type",
        )
    return error(path, f"{first['msg']} (got {_describe_value(value)})", f"correct {key}", "bad-value")


def _value_at(data: Any, path: KeyPath) -> Any:
    for part in path:
        data = data[part]
    return data


def pydantic_issues(exc: ValidationError, data: Any) -> list[Finding]:
    """Group pydantic's errors by the key path they resolve to; one issue per path."""
    groups: dict[tuple[KeyPath, str | None], list[dict]] = {}
    for err in exc.errors(include_url=False):
        path, missing = resolve(err["loc"], data)
        err = dict(err)
        err["_missing"] = missing if err["type"] == "missing" else None
        groups.setdefault((path, err["_missing"]), []).append(err)
    # A union reports every member; when one member got further (a deeper path), the
    # shallow "wrong type" complaints from the other members are noise.
    deep = [p for (p, _m) in groups]
    issues: list[Finding] = []
    for (path, _missing), group in groups.items():
        type_only = all(e["type"] in _KIND_WORDS for e in group)
        if type_only and any(len(d) > len(path) and d[: len(path)] == path for d in deep):
            continue
        issues.append(_issue_for(group, path, _value_at(data, path)))
    return issues


# ---- unknown keys -----------------------------------------------------------------------


def _unwrap(annotation: Any) -> list[Any]:
    """Union/Optional/Annotated -> the member annotations."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def unknown_keys(model: type[BaseModel], data: Any, path: KeyPath = ()) -> list[KeyPath]:
    """Key paths in ``data`` that ``model`` (recursively) does not declare."""
    if not isinstance(data, dict):
        return []
    found: list[KeyPath] = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            found.append(path + (key,))
            continue
        found.extend(_walk(field.annotation, value, path + (key,)))
    return found


def _walk(annotation: Any, value: Any, path: KeyPath) -> list[KeyPath]:
    for member in _unwrap(annotation):
        if _is_model(member) and isinstance(value, dict):
            return unknown_keys(member, value, path)
        origin = typing.get_origin(member)
        if origin is dict and isinstance(value, dict):
            args = typing.get_args(member)
            if not args or args[1] is Any:
                return []
            found: list[KeyPath] = []
            for key, item in value.items():
                found.extend(_walk(args[1], item, path + (key,)))
            return found
        if origin is list and isinstance(value, list):
            (item_type,) = typing.get_args(member) or (Any,)
            found = []
            for i, item in enumerate(value):
                found.extend(_walk(item_type, item, path + (i,)))
            return found
    return []


def unknown_key_issues(model: type[BaseModel], data: Any, what: str) -> list[Finding]:
    issues = []
    for path in unknown_keys(model, data):
        name = path[-1]
        issues.append(
            warning(
                path,
                f"unknown key '{name}' in {what} (kept, but nothing in servekit reads it)",
                f"check the spelling of '{name}' or remove it",
                "unknown-key",
                at_key=True,
            )
        )
    return issues


def _argument_lists(data: Any, path: KeyPath = ()) -> list[tuple[KeyPath, list]]:
    """Every list under a key named ``args`` or ``*_args`` (``base_args``, ``extra_args``, ``vllm_args``)."""
    found: list[tuple[KeyPath, list]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and isinstance(key, str) and (key == "args" or key.endswith("_args")):
                found.append((path + (key,), value))
            elif isinstance(value, (dict, list)):
                found.extend(_argument_lists(value, path + (key,)))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found.extend(_argument_lists(item, path + (i,)))
    return found


def spaced_arg_issues(data: Any) -> list[Finding]:
    """A warning per argument item that holds a flag and its value as one token."""
    issues = []
    for path, items in _argument_lists(data):
        for i, item in enumerate(items):
            split = split_spaced_flag(item)
            if split is not None:
                flag, value = split
                issues.append(warning(
                    path + (i,), f"argument {item!r} is one item holding the flag {flag} and its value; "
                    "vLLM would read it as one unknown option (plans split it in two)",
                    f"write it as two list items: \"{flag}\", \"{value}\"", "spaced-argument"))
    return issues


def check_schema(model: type[BaseModel], data: Any, what: str) -> tuple[Any, list[Finding]]:
    """Validate; return the typed instance (None when invalid) and every schema issue."""
    issues = unknown_key_issues(model, data, what) + spaced_arg_issues(data)
    try:
        instance = model.model_validate(data)
    except ValidationError as exc:
        return None, pydantic_issues(exc, data) + issues
    return instance, issues

"""JSON round trip for the frozen facts dataclasses, with enough checking for a clear error.

``to_json_fields`` leaves out None values and writes tuples as lists; ``from_json_fields``
refuses unknown keys, missing required keys and values of the wrong type, naming the file and
the key (``linear.conv_kernel``, ``layers[3]``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from typing import Any, Literal, Union

from servekit.errors import ServekitError


class FactsJsonError(ServekitError):
    """A facts JSON document with an unknown key, a missing key or a value of the wrong type."""


def to_json_fields(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if value is not None:
            out[f.name] = _encode(value)
    return out


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return to_json_fields(value)
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json_fields(cls: type, data: Any, where: str, prefix: str = "") -> Any:
    if not isinstance(data, dict):
        raise FactsJsonError(f"{where}: expected a JSON object, got {_kind(data)}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise FactsJsonError(
            f"{where}: unknown key {prefix + unknown[0]!r}",
            fix=f"remove it; known keys here: {', '.join(fields)}",
        )
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FactsJsonError(f"{where}: missing key {prefix + name!r}", fix="add it")
            continue
        values[name] = _decode(hints[name], data[name], where, prefix + name)
    return cls(**values)


def _decode(tp: Any, value: Any, where: str, key: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        (inner,) = [o for o in options if o is not type(None)]
        return _decode(inner, value, where, key)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise _bad(where, key, f"expected a list, got {_kind(value)}")
        inner = typing.get_args(tp)[0]
        return tuple(_decode(inner, v, where, f"{key}[{i}]") for i, v in enumerate(value))
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise _bad(where, key, f"{value!r} is not one of {', '.join(map(str, allowed))}")
        return value
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise _bad(where, key, f"expected an object, got {_kind(value)}")
        return from_json_fields(tp, value, where, key + ".")
    if tp is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _bad(where, key, f"expected an integer, got {_kind(value)}")
    if not isinstance(value, tp):
        raise _bad(where, key, f"expected {tp.__name__}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:60]


def _bad(where: str, key: str, why: str) -> FactsJsonError:
    return FactsJsonError(f"{where}: key {key!r}: {why}", fix="correct the value in the facts file")

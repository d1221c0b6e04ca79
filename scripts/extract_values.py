"""Engine values as JSON, for the flag-catalog extraction scripts: defaults and constants
(``jsonable``) and argparse action kinds (``action_kind``).

Standard library only: it runs inside the engine's environment.
"""

from __future__ import annotations

import argparse
import enum
from typing import Any

ACTION_KINDS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_CountAction": "count",
    "BooleanOptionalAction": "boolean_optional",
    "EnableDisableAction": "boolean_optional",  # vLLM 0.33: --enable-x / --disable-x
}


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: an enum as its value (its name when the value is not an int or a
    string), containers item by item, a dataclass or pydantic model as a mapping, else its repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return jsonable(value.name if not isinstance(value.value, (int, str)) else value.value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {f: jsonable(getattr(value, f, None)) for f in value.__dataclass_fields__}
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    return repr(value)


def action_kind(action: argparse.Action) -> str:
    """The kind of an argparse action, by its class name (unknown classes keep their name)."""
    return ACTION_KINDS.get(type(action).__name__, type(action).__name__)

"""Would the engine's parser accept this value for this flag? One rule per catalog value type.

``check_value(spec, text)`` returns None when the parser would accept ``text``, or a short
reason when it would refuse it. Facts that only startup checks (registries) live in ``lint``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servekit.engines.common.flags import FlagSpec
from servekit.engines.common.numbers import human_readable_int

_JSON_HUMAN_TOKEN = re.compile(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b")
_QUOTED = re.compile(r'("(?:[^"\\]|\\.)*")')
_OBJECT_TEXT = re.compile(r"^\s*{.*}\s*$", re.DOTALL)
_CLICK_TRUE = {"1", "true", "t", "yes", "y", "on"}
_CLICK_FALSE = {"0", "false", "f", "no", "n", "off"}


def _int(text: str) -> str | None:
    try:
        int(text)
    except ValueError:
        return f"{text!r} is not an integer"
    return None


def _float(text: str) -> str | None:
    try:
        float(text)
    except ValueError:
        return f"{text!r} is not a number"
    return None


def _human_int(text: str) -> str | None:
    try:
        human_readable_int(text)
    except ValueError:
        return f"{text!r} is not an integer (1000, 1k, 1K and 2M are accepted)"
    return None


def _human_int_or_auto(text: str) -> str | None:
    if text.strip() == "-1" or text.strip().lower() == "auto":
        return None
    return _human_int(text)


def _json(text: str) -> str | None:
    try:
        json.loads(text)
    except ValueError as exc:
        return f"invalid JSON: {exc}"
    return None


def expand_json_numbers(text: str) -> str:
    """vLLM lets config objects use 1k / 2G outside quoted strings; expand them to plain numbers."""
    parts = _QUOTED.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _JSON_HUMAN_TOKEN.sub(lambda m: str(human_readable_int(m.group())), parts[i])
    return "".join(parts)


def json_object_problem(spec: FlagSpec, text: str) -> str | None:
    """A config-object value: JSON object whose keys the config knows (when it refuses others). The
    values inside are the engine's own rule (vLLM: ``servekit.engines.vllm.config_fields``)."""
    try:
        value = json.loads(expand_json_numbers(text))
    except ValueError as exc:
        return f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return "expects a JSON object ({...})"
    if spec.json_extra_forbidden and spec.json_fields is not None:
        unknown = sorted(set(value) - set(spec.json_fields))
        if unknown:
            hints = [f"{key} -> {near[0]}" for key in unknown
                     if (near := difflib.get_close_matches(key, spec.json_fields, n=1, cutoff=0.6))]
            hint = f" (closest: {', '.join(hints)})" if hints else ""
            return f"unknown key(s) {', '.join(unknown)} in {spec.name}{hint}"
    return None


def json_kind(value: Any) -> str:
    """The kind of a JSON value as the catalog records what config fields accept."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return "str"
        return "numstr"
    return "list" if isinstance(value, list) else "dict"


def _json_or_str(text: str) -> str | None:
    return _json(text) if _OBJECT_TEXT.match(text) else None


def _click_bool(text: str) -> str | None:
    lowered = text.strip().lower()
    return None if lowered in _CLICK_TRUE | _CLICK_FALSE else f"{text!r} is not a boolean"


def _json_or_file(text: str) -> str | None:
    if text.lstrip().startswith(("{", "[")):
        return _json(text)
    if Path(text).is_file():
        return None
    return f"{text!r} is neither JSON nor an existing file"


def _devices(text: str) -> str | None:
    lowered = text.lower()
    if lowered in {"cpu", "gpu", "gpu:all"}:
        return None
    if not lowered.startswith("gpu:"):
        return f"expected cpu, gpu, gpu:all or gpu:<id>,<id> (got {text!r})"
    try:
        [int(part) for part in lowered.removeprefix("gpu:").split(",")]
    except ValueError:
        return f"{text!r} is not a valid device list (use cpu, gpu, or gpu:0,1)"
    return None


def _accept(_: str) -> str | None:
    return None


def lora_module_problem(text: str, fields: tuple[str, ...], required: tuple[str, ...]) -> str | None:
    """vLLM's --lora-modules item: name=path, or a JSON object of the LoRA module fields."""
    if text == "" or ("=" in text and "," not in text):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return f"{text!r} is neither name=path nor JSON"
    if not isinstance(value, dict):
        return "a JSON LoRA module must be an object"
    unknown = sorted(set(value) - set(fields)) if fields else []
    missing = [f for f in required if f not in value]
    if unknown or missing:
        return f"LoRA module fields: unknown {unknown}, missing {missing} (fields: {', '.join(fields)})"
    return None


_TYPE_RULES: dict[str, Callable[[str], str | None]] = {
    "int": _int,
    "float": _float,
    "human_int": _human_int,
    "human_int_or_auto": _human_int_or_auto,
    "json": _json,
    "json_or_str": _json_or_str,
    "click_bool": _click_bool,
    "json_or_file": _json_or_file,
    "devices": _devices,
    "str": _accept,
    "csv_list": _accept,
    "path": _accept,
}


def converted(spec: FlagSpec, text: str) -> Any:
    """The value as the parser compares it against choices (after type conversion)."""
    if spec.optional and text in ("", "None"):
        return None
    if spec.normalize == "lower_underscore":
        return text.lower().replace("-", "_")
    if spec.type == "int":
        return int(text)
    if spec.type == "float":
        return float(text)
    if not spec.case_sensitive:
        return text.casefold()
    return text


def check_value(spec: FlagSpec, text: str) -> str | None:
    """None if the parser accepts ``text`` for ``spec``; otherwise why not."""
    if spec.optional and text in ("", "None"):
        return _choice_problem(spec, None)
    if spec.type == "json_object":
        return json_object_problem(spec, text)
    if spec.type == "path" and spec.must_exist and not Path(text).exists():
        return f"{text!r} does not exist here (the engine checks it while parsing)"
    rule = _TYPE_RULES.get(spec.type, _accept)
    problem = rule(text)
    if problem:
        return problem
    return _choice_problem(spec, converted(spec, text))


def _choice_problem(spec: FlagSpec, value: Any) -> str | None:
    if spec.choices is None:
        return None
    if str(value) in spec.choices:
        return None
    return f"{value!r} is not one of {', '.join(spec.choices)}"

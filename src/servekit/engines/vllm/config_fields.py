"""The fields of vLLM's config classes behind its JSON-valued options, and the check of a value against them.

``data/vllm-<version>-config-fields.json[.gz]`` (written by scripts/extract_vllm_config_fields.py) names,
per option, the config class its JSON becomes and, per class, its fields: what each takes (type,
kinds, choices, bounds: see :mod:`servekit.engines.vllm.config_values`), the nested class a field
holds, whether unknown keys are refused, the fields without a default and the fields one field
needs beside it. Every key's value is checked here, at every level. The flag catalog already
reports unknown top-level keys when it lists them; this check reports them at every level below,
and at the top level of the options whose JSON the engine turns into a config class only at startup.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog, read_stored_json, stored_json
from servekit.engines.common.scan import HELP, Occurrence
from servekit.engines.common.startup import is_shell_reference
from servekit.engines.common.valuecheck import expand_json_numbers, json_kind
from servekit.records import record

DATA_DIR = Path(__file__).resolve().parent / "data"
_ANY_OF_KIND = ("x", 1, 1.5, [], {})  # a requirement measured with these holds for any value of their kind


@record
class ConfigFields:
    """One vLLM version's config-class tree: ``flags`` option -> {class, stage}; ``classes`` by name."""

    version: str
    flags: dict[str, dict[str, str]]
    classes: dict[str, dict[str, Any]]


def config_fields_path(version: str) -> Path | None:
    """The stored tree of ``version`` (``.json`` or ``.json.gz``), None when none is stored."""
    return stored_json(DATA_DIR / f"vllm-{version}-config-fields")


@lru_cache(maxsize=None)
def load_config_fields(version: str) -> ConfigFields | None:
    """The tree stored for ``version``; None when none is stored (nothing below the top level is checked)."""
    path = config_fields_path(version)
    if path is None:
        return None
    data = read_stored_json(path)
    return ConfigFields(version, data["flags"], data["classes"])


@record
class _Place:
    """Where a check stands: the option, the dotted key path inside it, and how vLLM meets the value."""

    option: str
    path: tuple[str, ...]
    stage: str

    def key(self, name: str) -> str:
        return ".".join((*self.path, name))

    def inside(self, name: str) -> _Place:
        return _Place(self.option, (*self.path, name), self.stage)

    @property
    def refusal(self) -> str:
        return "vLLM refuses it while parsing" if self.stage == "parse" else "vLLM refuses it when it starts"


def config_field_findings(tree: ConfigFields, catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    """Findings for every JSON-valued option's value, at every level of its config class."""
    out: list[Finding] = []
    for occ in occurrences:
        entry = tree.flags.get(occ.spec.name) if occ.spec is not HELP else None
        if entry is None:
            continue
        top_checked = occ.spec.json_fields is not None and occ.spec.json_extra_forbidden
        for value in occ.values:
            obj = _json_object(value)
            if obj is not None:
                place = _Place(occ.option, (), entry["stage"])
                if entry.get("dashed_keys"):  # the engine writes key-name dashes as underscores first
                    obj = {key.replace("-", "_"): item for key, item in obj.items()}
                out += check_object(tree, entry["class"], obj, place, top_checked)
    return out


def _json_object(text: str) -> dict[str, Any] | None:
    """The value as a JSON object, or None when the catalog's own checks speak about it."""
    if is_shell_reference(text):
        return None
    try:
        value = json.loads(expand_json_numbers(text))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def check_object(tree: ConfigFields, class_name: str, obj: dict[str, Any], place: _Place,
                 top_checked: bool = False) -> list[Finding]:
    """Findings for ``obj`` as the config class ``class_name`` at ``place`` (and every class below it)."""
    cls = tree.classes.get(class_name)
    if cls is None:
        return []
    fields: dict[str, dict[str, Any]] = cls["fields"]
    shallow = top_checked and not place.path  # the flag catalog reports unknown top-level keys
    out: list[Finding] = []
    for key, item in obj.items():
        field = fields.get(key)
        if field is None:
            if cls["extra_forbidden"] and not shallow:
                out.append(_unknown_key(place, class_name, key, fields))
            continue
        out += _value_findings(place, key, item, field)
        if isinstance(item, dict) and "class" in field:
            out += check_object(tree, field["class"], item, place.inside(key))
    out += _missing_findings(place, class_name, obj, cls)
    return out


def _unknown_key(place: _Place, class_name: str, key: str, fields: dict[str, Any]) -> Finding:
    names = [name for name in fields if not name.startswith("_")]
    near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    fix = (f"did you mean {place.key(near[0])}?" if near
           else f"{class_name} takes: {', '.join(names[:20])}{' ...' if len(names) > 20 else ''}")
    return Finding("error", "unknown-config-key",
                   f"{place.option}: {place.key(key)} is not a field of vLLM's {class_name}; {place.refusal}",
                   fix, location=place.option)


def _value_findings(place: _Place, key: str, item: Any, field: dict[str, Any]) -> list[Finding]:
    from servekit.engines.vllm.config_values import value_problem  # only a JSON value met needs its rules

    problem = value_problem(place.key(key), item, field)
    if problem is None:
        return []
    code = "bad-config-choice" if problem.choice else "bad-config-value"
    return [Finding("error", code, f"{place.option}: {place.key(key)} {problem.what}; {place.refusal}",
                    problem.fix, location=place.option)]


def _missing_findings(place: _Place, class_name: str, obj: dict[str, Any], cls: dict[str, Any]) -> list[Finding]:
    out = []
    for name in cls.get("required", []):
        if name not in obj:
            out.append(Finding("error", "missing-config-key",
                               f"{place.option}: {class_name} needs {place.key(name)}; {place.refusal}",
                               f"add {place.key(name)}", location=place.option))
    for name, cases in cls.get("requires", {}).items():
        if name not in obj:
            continue
        needed = next((case["with"] for case in cases if _same_case(case["value"], obj[name])), None)
        if needed and not any(other in obj for other in needed):
            choices = " or ".join(place.key(other) for other in needed)
            out.append(Finding("error", "missing-config-key",
                               f"{place.option}: {place.key(name)} needs {choices} beside it; {place.refusal}",
                               f"add {choices}{_choice_hint(cls, needed[0])}", location=place.option))
    return out


def _same_case(measured: Any, given: Any) -> bool:
    """``given`` falls under a requirement measured with ``measured`` (a stand-in for its kind, or itself)."""
    if any(measured == stand_in and type(measured) is type(stand_in) for stand_in in _ANY_OF_KIND):
        return json_kind(given) == json_kind(measured) or (json_kind(given) == "numstr" and isinstance(measured, str))
    return type(given) is type(measured) and given == measured


def _choice_hint(cls: dict[str, Any], name: str) -> str:
    strings = [s for s in cls["fields"].get(name, {}).get("strings", []) if s]
    return f" (one of {', '.join(dict.fromkeys(strings))})" if strings else ""


def nested_config_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    """:func:`config_field_findings` with the tree of the catalog's version (none stored: no findings)."""
    tree = load_config_fields(catalog.version)
    return config_field_findings(tree, catalog, occurrences) if tree is not None else []

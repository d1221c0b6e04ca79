"""Structured fields for kv-points lines written in free text, kept beside the lines they read.

A points file that is shared data (read-only) may state a field as free text the reader refuses
(``servekit.fit.point_fields``). A table keyed by point id (``FILE:LINE``) restates such fields
in their structured form, each value with the reason it was read that way; ``structured`` lays
an entry over its line (a ``config_facts.KEY`` field sets one key of ``config_facts``, a null
value leaves the field out). Each entry names the line's model, and a line of another model is an
error (the file changed under the table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from servekit.fit.point_fields import PointError, narrows, reads
from servekit.jsonl import numbered_objects
from servekit.records import record

CONFIG_PREFIX = "config_facts."


@record
class StructuredField:
    value: Any
    reason: str


@record
class TableEntry:
    model: str
    fields: dict[str, StructuredField]


def point_id(path: Path | str, line: int) -> str:
    """The id of the ``line``-th line (1-based) of a points file: ``FILE:LINE``."""
    return f"{Path(path).name}:{line}"


def read_points(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(point id, line) for every non-empty line of a points file."""
    out = []
    for number, point, error in numbered_objects(path.read_text(encoding="utf-8").splitlines()):
        if point is None:
            raise PointError(f"{path.name}: {error}")
        out.append((point_id(path, number), point))
    return out


def load_table(path: Path) -> dict[str, TableEntry]:
    """The table of structured fields at ``path`` (YAML), every field with its reason."""
    raw = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8")) or {}
    table = {}
    for pid, entry in raw.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
            raise PointError(f"{path.name}: {pid}: an entry names the line's model and its fields")
        fields = {}
        for key, spec in (entry.get("fields") or {}).items():
            if not isinstance(spec, dict) or "value" not in spec or not str(spec.get("reason") or "").strip():
                raise PointError(f"{path.name}: {pid}: {key} needs a value and the reason it is read that way")
            fields[key] = StructuredField(spec["value"], str(spec["reason"]))
        table[str(pid)] = TableEntry(entry["model"], fields)
    return table


def structured(pid: str, point: dict[str, Any], table: dict[str, TableEntry]) -> dict[str, Any]:
    """The line with the table's structured fields for ``pid`` laid over it (unchanged when the
    table has no entry for it). A field the line itself states in a form the reader reads
    (``servekit.fit.point_fields.reads``) is the line's: the table fills only fields the line
    leaves out or states as free text, and settles an approximate version to a release of its
    series (``point_fields.narrows``) where the line's own evidence names one."""
    entry = table.get(pid)
    if entry is None:
        return point
    if point.get("model") != entry.model:
        raise PointError(f"{pid}: the table's entry is for {entry.model!r}, the line is {point.get('model')!r}",
                         fix="update the table of structured fields for the changed points file")
    out = dict(point)
    facts = dict(out.get("config_facts") or {})
    for key, spec in entry.fields.items():
        target, name = (facts, key[len(CONFIG_PREFIX):]) if key.startswith(CONFIG_PREFIX) else (out, key)
        stated = target.get(name)
        if stated is not None and reads(key, stated) and not narrows(key, stated, spec.value):
            continue  # the line states the field in structured form itself: the line is read
        if spec.value is None:
            target.pop(name, None)
        else:
            target[name] = spec.value
    if facts or "config_facts" in out:
        out["config_facts"] = facts
    return out

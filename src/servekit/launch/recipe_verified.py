"""Adding a verify summary to a recipe file with ruamel.yaml round-trip editing.

The summary is appended to the recipe's top-level ``verified`` list (created at the end of the
document when absent); comments, key order, quoting and indentation of everything else stay
as they were, so a diff of the file shows only added lines. The edited text replaces the file
in one step (``servekit.atomic``): a reader, or a crash, never meets half a recipe; a recipe
that is a symbolic link is edited where it points.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from servekit.atomic import write_text_atomic
from servekit.errors import ServekitError

KEY = "verified"


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _commented(value: Any) -> Any:
    if isinstance(value, dict):
        out = CommentedMap()
        for key, item in value.items():
            out[key] = _commented(item)
        return out
    if isinstance(value, list):
        seq = CommentedSeq([_commented(v) for v in value])
        seq.fa.set_flow_style()
        return seq
    return value


def add_verified(path: Path, entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``path``'s ``verified`` list."""
    path = Path(path).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ServekitError(f"cannot read recipe {path}: {exc.strerror}", fix="pass an existing recipe YAML") from None
    yaml = _yaml()
    try:
        doc = yaml.load(text)
    except Exception as exc:  # noqa: BLE001 - ruamel raises many error types for a bad file
        raise ServekitError(f"{path} is not valid YAML: {exc}", fix="fix the recipe file") from None
    if not isinstance(doc, dict):
        raise ServekitError(f"{path} is not a YAML mapping", fix="pass a recipe file")
    write_text_atomic(path, _edited(yaml, doc, text, entry, path))


def _edited(yaml: YAML, doc: Any, text: str, entry: dict[str, Any], path: Path) -> str:
    """The recipe's text with ``entry`` added to its ``verified`` list."""
    if KEY not in doc:
        return text + ("" if text.endswith("\n") else "\n") + f"{KEY}:\n" + _dump_item(entry)
    if not isinstance(doc.get(KEY), list):
        raise ServekitError(f"{path}: {KEY} is not a list", fix=f"make {KEY} a list of entries")
    doc[KEY].append(_commented(entry))
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _dump_item(entry: dict[str, Any]) -> str:
    """One list item in block style, indented as the list this module creates."""
    out = io.StringIO()
    _yaml().dump([_commented(entry)], out)
    return out.getvalue()

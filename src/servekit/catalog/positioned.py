"""YAML documents that remember where every key and value came from.

Validation needs plain data (for pydantic) *and* the file position of each key path (for
messages). ruamel's composer gives us the node graph with start marks; we build the plain
data from those nodes ourselves, recording the line and column of every mapping key and
every value on the way. Composing through the C-backed parser keeps a whole catalog well
under a second, where the round-trip loader takes several.

Duplicate mapping keys are not fatal here: the last one wins (as in the public site's YAML
reader) and each repeat is reported so the validator can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from servekit.catalog.documents import normalise, read_text, yaml_error
from servekit.errors import CatalogError, Location
from servekit.records import record

KeyPath = tuple[str | int, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"


@record
class Mark:
    """1-based line and column."""

    line: int
    column: int


@dataclass
class PositionedDocument:
    """One YAML file as plain data plus the position of each key path in it."""

    path: Path
    data: Any
    values: dict[KeyPath, Mark] = field(default_factory=dict)
    """Where the value at a key path starts."""
    keys: dict[KeyPath, Mark] = field(default_factory=dict)
    """Where the mapping key that ends a key path is written."""
    duplicates: list[KeyPath] = field(default_factory=list)
    """Key paths whose key was written more than once (the position is the repeat's)."""
    duplicate_marks: dict[KeyPath, Mark] = field(default_factory=dict)

    def mark_for(self, key_path: KeyPath, *, prefer_key: bool = False) -> Mark | None:
        """The best position for a key path: its value (or key), else the nearest parent."""
        path = tuple(key_path)
        while True:
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            mark = first.get(path) or second.get(path)
            if mark is not None:
                return mark
            if not path:
                return None
            path = path[:-1]

    def location(self, key_path: KeyPath, *, prefer_key: bool = False) -> Location:
        mark = self.mark_for(key_path, prefer_key=prefer_key)
        return Location(
            str(self.path),
            mark.line if mark else None,
            mark.column if mark else None,
            tuple(key_path),
        )


@lru_cache(maxsize=1)
def _yaml():
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=False)


def _mark(node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Turns a composed node graph into plain data, filling a PositionedDocument."""

    def __init__(self, doc: PositionedDocument) -> None:
        self.doc = doc
        self.constructor = _yaml().constructor
        self.open_nodes: set[int] = set()
        """Collections being built right now: meeting one again means an alias refers to itself."""

    def build(self, node, path: KeyPath) -> Any:
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        self.doc.values.setdefault(path, _mark(node))
        if not isinstance(node, (MappingNode, SequenceNode)):
            return normalise(self.constructor.construct_object(node, deep=True))
        if id(node) in self.open_nodes:
            raise CatalogError(
                "an alias refers to the collection that contains it",
                location=self.doc.location(path),
                fix="replace the alias (*name) with the values it should repeat",
            )
        self.open_nodes.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        finally:
            self.open_nodes.discard(id(node))

    def _mapping(self, node, path: KeyPath) -> dict[str, Any]:
        from ruamel.yaml.nodes import MappingNode

        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if not isinstance(value_node, MappingNode) else [value_node]
                for source in sources:
                    if isinstance(source, MappingNode):
                        merged.update(self._mapping(source, path))
                continue
            key = self.build_key(key_node)
            child = path + (key,)
            if key in out:
                self.doc.duplicates.append(child)
                self.doc.duplicate_marks[child] = _mark(key_node)
                self.doc.keys[child] = _mark(key_node)
                self.doc.values[child] = _mark(value_node)
            else:
                self.doc.keys.setdefault(child, _mark(key_node))
            out[key] = self.build(value_node, child)
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    def build_key(self, key_node) -> str:
        from ruamel.yaml.nodes import ScalarNode

        if isinstance(key_node, ScalarNode):
            value = normalise(self.constructor.construct_object(key_node, deep=True))
            return value if isinstance(value, str) else str(value)
        return str(key_node.value)


def load_positioned(path: Path) -> PositionedDocument:
    """Parse one YAML file; a syntax error becomes a CatalogError with its line and column."""
    from ruamel.yaml.error import YAMLError

    text = read_text(path)
    doc = PositionedDocument(path=path, data=None)
    try:
        node = _yaml().compose(text)
        doc.data = _Builder(doc).build(node, ()) if node is not None else None
    except YAMLError as exc:
        raise yaml_error(path, exc) from None
    except RecursionError:
        raise CatalogError(
            "YAML nests too deeply to read",
            location=Location(str(path)),
            fix="flatten the document",
        ) from None
    return doc

"""A recipe's ``omni`` section (vLLM-Omni): the tasks it serves, the port and the serve binary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.hardware_block import HardwareBlock, block_map, block_or_empty
from servekit.catalog.domain.values import Doc, listing, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class OmniTask:
    """One ``omni.tasks`` entry: a bare task id, or a map with ``id``, ``key``, ``model_id``,
    ``extra_args`` and ``hardware_overrides``. ``key`` (the selector) is the id unless the
    entry names one; ``raw`` is the entry as a map (``{"id": ...}`` for a bare id)."""

    id: Any
    key: Any
    model_id: Any
    extra_args: Any
    hardware_overrides: dict[str, Any]
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> OmniTask:
        doc = {"id": raw} if isinstance(raw, str) else mapping(raw)
        get = doc.get
        return cls(get("id"), doc["key"] if "key" in doc else get("id"), get("model_id"), get("extra_args"),
                   block_map(get("hardware_overrides")), doc)

    def block(self, hw_id: str) -> HardwareBlock:
        """``hardware_overrides.<hw_id>`` (the empty block when the task has none there)."""
        return block_or_empty(self.hardware_overrides.get(hw_id))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Omni:
    """``omni``: every task entry in order, ``port`` and ``serve_binary`` as written."""

    tasks: list[OmniTask]
    port: Any
    serve_binary: Any
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> Omni:
        doc = mapping(raw)
        get = doc.get
        return cls([OmniTask.of(entry) for entry in listing(get("tasks"))], get("port"), get("serve_binary"), doc)

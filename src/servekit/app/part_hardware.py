"""Hardware named by a GPU of the device table, for a part the catalog's taxonomy does not list.

``fit``, ``perf`` and ``plan`` take ``--hardware`` as a profile of the catalog's taxonomy or
``local``; a GPU the device tables know (``servekit.fit.gpu_models``: a row of the memory table,
or a part of the speed table with a datasheet size) is hardware too, as one card (``l4``) or a
node of ``N`` cards (``l4_4x``, ``a10_2x``). Its entry is built like a taxonomy entry: the part's
vendor, NVIDIA generation and usual link from that table, its nominal size from the datasheet
(``servekit.hardware.device_memory.NOMINAL_MEMORY``); the profile then takes the memory the engine
sees from the measured row of the part where there is one, else assumes it, and says which
(``HardwareProfile.memory_source``). NVIDIA parts older than Ampere (Volta, Turing) are left out:
the planner's precision and kernel rules start at Ampere.
"""

from __future__ import annotations

import re
from typing import Any

from servekit.fit.gpu_models import GPU_MODEL_IDS, gpu_part
from servekit.hardware.device_compute import compute_row
from servekit.hardware.device_memory import nominal_row, part_memory
from servekit.hardware.profile import NVIDIA_ORDER

COUNT = re.compile(r"(?P<part>[a-z0-9_]+?)(?:_(?P<count>[1-9][0-9]?)x)?")
"""A part id, with an optional card count (``l4_4x``)."""


def _display(part_id: str) -> str:
    """The part's name as a display name: its id's words in capitals (``rtx_4090`` -> ``RTX 4090``)."""
    return " ".join(word.upper() for word in part_id.split("_"))


def part_ids() -> list[str]:
    """The ids of every part ``part_entry`` builds an entry for (one card each)."""
    return [pid for pid in GPU_MODEL_IDS if part_entry(pid) is not None]


def part_entry(name: str) -> dict[str, Any] | None:
    """A taxonomy-shaped entry for ``name`` (``PART[_Nx]``), or None when it names no part."""
    match = COUNT.fullmatch(name)
    if match is None:
        return None
    part_id, count = match["part"], int(match["count"] or 1)
    part, nominal = gpu_part(part_id), nominal_row(part_id)
    if part is None or nominal is None:
        return None
    if part.brand == "NVIDIA" and part.generation not in NVIDIA_ORDER:
        return None
    entry: dict[str, Any] = {
        "brand": part.brand, "display_name": _display(part_id), "gpu_count": count,
        "vram_gb": nominal.gb * count, "kind": "gpu", "multi_node": False,
        "description": f"{count} x {_display(part_id)}: a GPU of servekit's device table, not a platform of the "
                       f"catalog ({nominal.source})",
    }
    if part.generation:
        entry["generation"] = part.generation
    if count > 1:
        entry["interconnect"] = part.interconnect
    return entry


def gpu_rows() -> list[dict[str, Any]]:
    """Every GPU of the device tables (``servekit list gpus``): vendor, generation and link, the
    datasheet size, the memory the engine sees and whether a start-up log measured it or the
    assumed-memory rule priced it, the speed figures, and whether ``--hardware`` plans for it."""
    rows = []
    for part_id in GPU_MODEL_IDS:
        part = gpu_part(part_id)
        if part is None:
            continue
        nominal, speed = nominal_row(part_id), compute_row(part_id)
        gib, basis = part_memory(part_id, part_id, part.brand == "AMD")
        rows.append({
            "id": part_id, "brand": part.brand, "generation": part.generation or None, "link": part.interconnect,
            "nominal_gb": nominal.gb if nominal else None, "memory_gib": round(gib, 2) if gib else None,
            "memory": basis.split(":", 1)[0], "memory_source": basis,
            "bf16_tflops": speed.tflops.get("bf16") if speed else None,
            "memory_gb_s": speed.memory_gb_s if speed else None,
            "hardware": part_entry(part_id) is not None,
        })
    return rows

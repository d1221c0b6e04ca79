"""This machine's GPUs, as their vendors' tools report them: ``nvidia-smi`` for NVIDIA GPUs,
``rocm-smi`` for AMD Instinct and Radeon GPUs. A machine with neither tool on the PATH has no GPU
servekit can use locally.

Each GPU's memory is the total its runtime hands the engine: nvidia-smi's total less what the
driver reserves (``parse_nvidia_smi``), rocm-smi's VRAM total, which is what HIP reports (an
MI300X's 206141652992 bytes are the 191.98 GiB vLLM logs on one, vllm-project/vllm#53961).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

from servekit.records import record

GIB = 1024**3


@record
class Gpu:
    name: str
    memory_gib: float
    compute_cap: str | None = None
    """``major.minor`` as ``nvidia-smi --query-gpu=compute_cap`` prints it (None: not reported)."""
    vendor: str = "NVIDIA"
    """NVIDIA or AMD: which runtime (CUDA, ROCm) the GPU runs under."""
    gfx: str | None = None
    """An AMD GPU's ISA (``gfx942``), as rocm-smi's ``GFX Version`` gives it (None: not reported)."""


def _query(exe: str, fields: str) -> str | None:
    try:
        return subprocess.run([exe, f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


QUERIES = (("name,memory.total,memory.reserved,compute_cap", True, True),
           ("name,memory.total,compute_cap", False, True),
           ("name,memory.total", False, False))
"""``nvidia-smi --query-gpu`` field lists, richest first, each with whether it asks for the
reserved memory and the compute capability: a driver that does not know a field fails the query
and the next is asked."""


def nvidia_gpus() -> tuple[Gpu, ...]:
    """This machine's NVIDIA GPUs (``QUERIES``, the first a driver answers)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return ()
    for fields, with_reserved, with_cap in QUERIES:
        out = _query(exe, fields)
        if out is not None:
            return tuple(parse_nvidia_smi(out, with_cap=with_cap, with_reserved=with_reserved))
    return ()


def _mib(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_nvidia_smi(text: str, with_cap: bool = False, with_reserved: bool = False) -> list[Gpu]:
    """``name, MiB[, reserved MiB][, major.minor]`` lines as ``nvidia-smi
    --query-gpu=name,memory.total[,memory.reserved][,compute_cap]`` prints them. A GPU's memory is
    the total less what the driver and firmware reserve, which is the total CUDA reports
    (``cudaMemGetInfo``, the figure vLLM budgets from): nvidia-smi -q of an H100 80GB HBM3 shows
    81559 MiB total and 454 MiB reserved, 79.20 GiB, where vLLM logs 79.19 GiB."""
    gpus = []
    for line in text.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        cap = parts.pop() if with_cap and len(parts) > 2 else None
        reserved = _mib(parts.pop()) if with_reserved and len(parts) > 2 else None
        name, mib = ",".join(parts[:-1]), _mib(parts[-1])
        if mib is None:
            continue
        usable = mib - (reserved or 0.0)
        gpus.append(Gpu(name, round(usable / 1024, 2), cap if cap and cap != "[N/A]" else None))
    return gpus


ROCM_QUERIES = (("--showproductname",), ("--showmeminfo", "vram"))
"""rocm-smi is asked one table at a time: asked for several in one call, some releases answer with
the last table only."""
GFX = re.compile(r"gfx[0-9a-f]{3,4}")
"""An ISA name as HIP spells it (``gfx90a``, ``gfx942``, ``gfx1100``)."""
GFX9_DECIMAL = re.compile(r"gfx9(\d)(\d\d)")
"""Some rocm-smi releases print a gfx9 ISA's stepping in decimal (``gfx9010`` for an MI250's
``gfx90a``); every gfx9 name HIP knows has three characters, so four digits can only be this."""


def hip_target(gfx: str | None) -> str | None:
    """The ISA as HIP names it (``gfx9010`` -> ``gfx90a``); None for a value that is not one."""
    if not gfx:
        return None
    if decimal := GFX9_DECIMAL.fullmatch(gfx):
        stepping = int(decimal[2])
        return f"gfx9{decimal[1]}{stepping:x}" if stepping < 16 else None
    return gfx if GFX.fullmatch(gfx) else None


def _rocm_table(exe: str, args: tuple[str, ...]) -> dict[str, Any]:
    try:
        out = subprocess.run([exe, *args, "--json"], capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    start = out.find("{")  # a release may print a warning line before the JSON
    try:
        table = json.loads(out[start:]) if start >= 0 else {}
    except ValueError:
        return {}
    return table if isinstance(table, dict) else {}


def amd_gpus() -> tuple[Gpu, ...]:
    """This machine's AMD GPUs (rocm-smi's product and VRAM tables, merged per card)."""
    exe = shutil.which("rocm-smi")
    if exe is None:
        return ()
    cards: dict[str, dict[str, Any]] = {}
    for args in ROCM_QUERIES:
        for card, fields in _rocm_table(exe, args).items():
            if isinstance(fields, dict):
                cards.setdefault(card, {}).update(fields)
    return tuple(parse_rocm_smi(cards))


def _card_number(card: str) -> int:
    digits = re.sub(r"\D", "", card)
    return int(digits) if digits else 0


def _field(fields: dict[str, Any], *names: str) -> str | None:
    """A field by any of its spellings (rocm-smi's capitalization changed between releases)."""
    lower = {str(key).lower(): value for key, value in fields.items()}
    for name in names:
        value = lower.get(name.lower())
        if value not in (None, "", "N/A"):
            return str(value).strip()
    return None


def parse_rocm_smi(cards: dict[str, Any]) -> list[Gpu]:
    """``{"card0": {...}, ...}`` as rocm-smi's ``--json`` tables give them (the ``system`` entry
    and cards without a VRAM total are skipped), in card order."""
    gpus = []
    for card in sorted((c for c in cards if c.lower().startswith("card")), key=_card_number):
        fields = cards[card]
        if not isinstance(fields, dict):
            continue
        total = _field(fields, "VRAM Total Memory (B)")
        name = _field(fields, "Card Series", "Device Name", "Card Model") or card
        try:
            memory = int(total) / GIB if total else None
        except ValueError:
            memory = None
        if memory is None:
            continue
        gfx = hip_target((_field(fields, "GFX Version") or "").lower())
        gpus.append(Gpu(name, round(memory, 2), vendor="AMD", gfx=gfx))
    return gpus


def local_gpus() -> tuple[Gpu, ...]:
    """This machine's GPUs: NVIDIA's when nvidia-smi finds any, else AMD's."""
    return nvidia_gpus() or amd_gpus()

"""What a GPU's name says about it, for launches known only by the name their log printed:
its vendor (the platform vLLM ran on), how a node of such parts is linked, and its total memory
as the engine sees it (``torch.cuda.mem_get_info``) when the launch does not state it.

Memory, in order:

1. a part whose total memory a public start-up log printed (the one device table,
   ``servekit.hardware.device_memory``, which the planner's hardware profiles read too);
2. a size written in the name (``H100 NVL 94GB``): nominal GB times the assumed usable share
   (``servekit.hardware.assumed_gib``; AMD Instinct parts expose their whole nominal memory:
   an MI300X's 192 GB print as 191.98 GiB);
3. the bundled taxonomy's profile of that part (matched by display name), priced the same way;
4. otherwise unknown (no prediction from the memory model).

Generation (NVIDIA only; it says which number formats the part computes natively,
``servekit.hardware.precision``): ``GPU_GENERATIONS``, from the architecture each product line is
built on (NVIDIA's product pages: Ampere GA100/GA102, Ada AD102/AD104, Hopper GH100, Blackwell
GB100/GB202); a name no row matches has no generation (nothing is derived from it).

Links: NVLink/NVSwitch data-centre parts (A100 SXM, H100, H200, H800, B200, B300, GB200, GB300)
and AMD Instinct parts (xGMI) keep large communication buffers; a name with ``PCIe`` or any other
part counts as PCIe.
"""

from __future__ import annotations

import re
from functools import lru_cache

from servekit.catalog.documents import bundled_catalog_dir, read_mapping
from servekit.hardware import DEVICE_MEMORY, assumed_gib, measured_memory, profiles_for

GPU_GENERATIONS: tuple[tuple[str, str], ...] = (
    (r"\b(?:g?b[1-3]00|rtx 50\d0|rtx pro \d000(?! ada)|5090|5080)\b", "blackwell"),
    (r"\b(?:gh200|h[12]00|h800|h20)\b", "hopper"),
    (r"\b(?:l4|l40s?|l20|rtx 40\d0|4090|4080|rtx (?:\d000 )?ada|\d000 ada)\b", "ada"),
    (r"\b(?:a100|a800|a10g?|a16|a2|a30|a40|rtx a\d000|a\d000|rtx 30\d0(?: ti)?|3090|3080)\b", "ampere"),
    (r"\b(?:t4|rtx 20\d0|quadro rtx)\b", "turing"),
    (r"\bv100\b", "volta"),
    (r"\b(ampere|ada|hopper|blackwell|turing|volta)\b", ""),
)
"""(pattern over the lower-cased name, NVIDIA generation), first match wins; the last row takes a
generation the name spells out (``unknown Ampere GPU``)."""

_SWITCHED = re.compile(r"\b(?:g?[hb][1-3]00|h800|a100|mi3\d\dx?)\b")
_AMD = re.compile(r"\b(?:amd|instinct|mi\d{3}x?|radeon)\b")
_STATED_GB = re.compile(r"\b(\d{2,3}) ?gb\b")
_OTHER_MEMORY_VARIANT = re.compile(r"\bnvl\b")
"""A variant word naming a part whose memory differs from the taxonomy's (H100 NVL: 94 GB)."""


def is_amd(name: str) -> bool:
    return bool(_AMD.search(name.lower()))


def interconnect_from_name(name: str) -> str:
    """``xgmi`` (AMD Instinct), ``nvlink`` (SXM data-centre parts) or ``pcie``."""
    lower = name.lower()
    if "pcie" in lower or not _SWITCHED.search(lower):
        return "pcie"
    return "xgmi" if is_amd(lower) else "nvlink"


def generation_from_name(name: str) -> str:
    """The NVIDIA generation a GPU name names (``ampere``, ``ada``, ...), or "" when it does not
    tell (AMD parts and unknown names included)."""
    lower = re.sub(r"\s+", " ", name.lower())
    if is_amd(lower):
        return ""
    for pattern, generation in GPU_GENERATIONS:
        match = re.search(pattern, lower)
        if match:
            return generation or match.group(1)
    return ""


def _usable(nominal_gb: float, amd: bool) -> float:
    return round(assumed_gib(nominal_gb, amd), 2)


@lru_cache(maxsize=1)
def _taxonomy_parts() -> tuple[tuple[re.Pattern[str], float], ...]:
    """(name pattern, GiB the engine sees per device) of the bundled taxonomy's GPU profiles,
    longest display name first."""
    profiles = profiles_for(read_mapping(bundled_catalog_dir() / "taxonomy.yaml")).values()
    parts = {}
    for p in profiles:
        if p.kind == "gpu" and p.memory_gb:
            label = re.sub(r"\s+\d+x$", "", p.display_name.strip().lower())
            parts.setdefault(label, p.memory_gib)
    ordered = sorted(parts.items(), key=lambda item: -len(item[0]))
    return tuple((re.compile(rf"(?<![a-z0-9]){re.escape(label)}(?![a-z0-9])"), gib) for label, gib in ordered)


def memory_from_name(name: str) -> float | None:
    """Total memory (GiB) of the part a GPU name names, or None when the name does not tell."""
    lower = re.sub(r"\s+", " ", name.lower())
    row = measured_memory(lower)
    if row is not None:
        return row.memory_gib
    stated = _STATED_GB.search(lower)
    if stated:
        return _usable(float(stated.group(1)), is_amd(lower))
    for pattern, gib in _taxonomy_parts():
        if pattern.search(lower) and not _OTHER_MEMORY_VARIANT.search(lower):
            return round(gib, 2)
    return None

"""What a GPU's name says about it, for launches known only by the name their log printed:
its vendor (the platform vLLM ran on), how a node of such parts is linked, and its total memory
as the engine sees it (``torch.cuda.mem_get_info``) when the launch does not state it.

Memory, in order:

1. a part whose total memory a public start-up log printed (``GPU_MODELS``, each row with its
   source);
2. a size written in the name (``H100 NVL 94GB``): nominal GB times the usable share
   (``servekit.hardware.USABLE_FRACTION``); AMD Instinct parts expose their whole nominal memory
   (an MI300X's 192 GB print as 191.98 GiB);
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
from dataclasses import dataclass
from functools import lru_cache

from servekit.catalog.documents import bundled_catalog_dir, read_mapping
from servekit.hardware import USABLE_FRACTION, profiles_for

AMD_USABLE_FRACTION = 191.98 / 192
"""Share of an AMD Instinct part's nominal memory the engine sees: an MI300X (192 GB) prints
191.98 GiB (vllm-project/vllm#53961); assumed for the other Instinct parts."""


@dataclass(frozen=True)
class GpuModel:
    pattern: str
    """Regular expression over the lower-cased name."""
    memory_gib: float
    source: str


GPU_MODELS: tuple[GpuModel, ...] = (
    GpuModel(r"\bh200\b", 139.8, "Kimi-K2-Thinking start-up log on H200 (vllm-project/recipes Kimi-K2-Think.md)"),
    GpuModel(r"\bh100\b(?!.*\bnvl\b)", 79.19,
             "llm-d-incubation/llm-d-planner accuracy logs, vLLM 0.19.0 on H100-80GB-HBM3 ('79.19 GiB')"),
    GpuModel(r"\ba100\b.*\b40 ?gb\b|\ba100-(?:sxm4|pcie)-40gb\b", 39.39,
             "vLLM 0.7.1 log on ml.p4d.24xlarge (A100-SXM4-40GB), SageMaker LMI DeepSeek-Coder-V2 walkthrough: "
             "'total_gpu_memory (39.39GiB)'"),
    GpuModel(r"\ba100\b", 79.15, "dennislee22/vLLM-benchmarking vllm-7B-1gpuA10080GB logs (vLLM 0.10.1.1)"),
    GpuModel(r"\bl40s?\b", 44.42,
             "4xL40S (AWS g6e) serving guide and IBM CodeEngine serverless-fleets inferencing logs"),
    GpuModel(r"\ba10\b(?!g)", 22.06, "vllm-project/vllm#17327 (A10 24 GB, vLLM 0.8.5)"),
    GpuModel(r"\brtx 3090\b(?! ti)", 23.58,
             "vllm-project/vllm#10517 and #14447 logs: 'total_gpu_memory (23.58GiB)'"),
    GpuModel(r"\brtx pro 6000\b", 95.6,
             "vllm-project/recipes commit 22972927 'Verify Qwen3.8-27B on RTX Pro 6000' (Blackwell Max-Q)"),
    GpuModel(r"\bmi300x\b", 191.98, "vllm-project/vllm#53961 (AMD Instinct MI300X)"),
)

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
    return round(nominal_gb * (AMD_USABLE_FRACTION if amd else USABLE_FRACTION), 2)


@lru_cache(maxsize=1)
def _taxonomy_parts() -> tuple[tuple[re.Pattern[str], float, bool], ...]:
    """(name pattern, nominal GB per device, AMD?) of the bundled taxonomy's GPU profiles,
    longest display name first."""
    profiles = profiles_for(read_mapping(bundled_catalog_dir() / "taxonomy.yaml")).values()
    parts = {}
    for p in profiles:
        if p.kind == "gpu" and p.memory_gb:
            label = re.sub(r"\s+\d+x$", "", p.display_name.strip().lower())
            parts.setdefault(label, (p.memory_gb, p.brand.lower() == "amd"))
    ordered = sorted(parts.items(), key=lambda item: -len(item[0]))
    return tuple((re.compile(rf"(?<![a-z0-9]){re.escape(label)}(?![a-z0-9])"), gb, amd) for label, (gb, amd) in ordered)


def memory_from_name(name: str) -> float | None:
    """Total memory (GiB) of the part a GPU name names, or None when the name does not tell."""
    lower = re.sub(r"\s+", " ", name.lower())
    for model in GPU_MODELS:
        if re.search(model.pattern, lower):
            return model.memory_gib
    stated = _STATED_GB.search(lower)
    if stated:
        return _usable(float(stated.group(1)), is_amd(lower))
    for pattern, nominal, part_amd in _taxonomy_parts():
        if pattern.search(lower) and not _OTHER_MEMORY_VARIANT.search(lower):
            return _usable(nominal, part_amd)
    return None

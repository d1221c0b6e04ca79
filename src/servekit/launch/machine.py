"""Hardware ``local``: the machine servekit runs on, detected (CPU model, cores, memory, GPUs),
and the taxonomy entry a plan for it is made with.

GPUs are read from ``nvidia-smi`` or ``rocm-smi`` (``servekit.launch.gpus``); a machine with
neither has none that servekit can use locally. ``taxonomy_entry`` describes this machine in the taxonomy's terms
(one CPU node, or its GPUs): ``up`` on hardware ``local`` plans for that entry, never for a
catalog default device.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.hardware import LOCAL, measured_memory, nominal_gb_of, profile_of
from servekit.launch.gpus import Gpu, local_gpus, parse_nvidia_smi, parse_rocm_smi
from servekit.records import record

__all__ = ["Gpu", "LocalMachine", "detect", "parse_nvidia_smi", "parse_rocm_smi", "taxonomy_entry",
           "with_this_machine"]

GIB = 1024**3
GPU_FACTS = ("brand", "generation", "kind", "platform", "compute_target", "compute_arch", "precisions")
"""The facts of a taxonomy GPU entry that hold for every GPU of that model (not its count,
memory or interconnect, which are this machine's own)."""
CPU_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}
"""``vendor_id`` of ``/proc/cpuinfo`` -> brand."""


@record
class LocalMachine:
    cpu_model: str
    cores: int
    logical_cpus: int
    memory_gib: float
    gpus: tuple[Gpu, ...] = ()
    system: str = ""
    available_gib: float | None = None
    """Memory free for a new process now (psutil's ``available``); None: not measured."""
    cpu_vendor: str = ""

    @property
    def kind(self) -> str:
        return "gpu" if self.gpus else "cpu"

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["gpus"] = [asdict(g) for g in self.gpus]
        doc["kind"] = self.kind
        return doc

    def fit_profile(self, profiles: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """This machine as a taxonomy hardware entry (``taxonomy_entry``)."""
        return taxonomy_entry(self, profiles or {})


def _node_gb(memory_gib: float, devices: int = 1, amd: bool = False) -> float:
    """The taxonomy's ``vram_gb`` for a node whose ``devices`` have ``memory_gib`` usable in all:
    the inverse of ``servekit.hardware.profile.usable_gib``."""
    return round(nominal_gb_of(memory_gib / devices, amd) * devices, 3)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _names_model(gpu_name: str, display_name: str) -> bool:
    """The display name's words appear together, in order, in the GPU's name
    ("H100" in "NVIDIA H100 80GB HBM3"; "RTX Pro 6000 2x" is not in any single GPU's name)."""
    have, want = _words(gpu_name), _words(display_name)
    return bool(want) and any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


VENDOR_PLATFORMS = {"NVIDIA": "cuda", "AMD": "rocm"}
"""The platform a GPU of each vendor runs the engine on."""


def gpu_model_id(gpu: Gpu, match: tuple[str, Mapping[str, Any]] | None) -> str | None:
    """The id of this GPU's model for the device tables: its taxonomy entry's (``match``, from
    ``gpu_model_match``), else the memory table's row its name matches
    (``servekit.hardware.measured_memory``)."""
    if match:
        return re.sub(r"_\d+x$", "", match[0])
    row = measured_memory(gpu.name)
    return row.id if row else None


def gpu_model_match(gpu: Gpu, count: int,
                    profiles: Mapping[str, Mapping[str, Any]]) -> tuple[str, Mapping[str, Any]] | None:
    """(id, entry) of the taxonomy entry of this GPU's model on its vendor's platform (CUDA, ROCm):
    the longest display name the GPU's name holds; among entries of that name, the one with
    ``count`` GPUs, else the fewest."""
    found = []
    for hw_id, raw in profiles.items():
        try:
            same = profile_of(raw, hw_id).platform == VENDOR_PLATFORMS.get(gpu.vendor)
        except (ValueError, TypeError, KeyError):
            continue
        name = str(raw.get("display_name") or "")
        if same and _names_model(gpu.name, name):
            found.append((-len(_words(name)), raw.get("gpu_count") != count, raw.get("gpu_count") or 1, hw_id, raw))
    if not found:
        return None
    best = min(found, key=lambda row: row[:4])
    return best[3], best[4]


def _compute_target(cap: str | None) -> str | None:
    """``9.0`` -> ``cuda:sm_90``."""
    major, _, minor = (cap or "").partition(".")
    return f"cuda:sm_{major}{minor}" if major.isdigit() and minor.isdigit() else None


def taxonomy_entry(machine: LocalMachine, profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A taxonomy-shaped entry for ``machine``: its GPUs (the facts of their model's taxonomy
    entry, this machine's count and memory, the compute capability or ISA it reports), or one CPU
    node with the memory available now."""
    if machine.gpus:
        first = machine.gpus[0]
        match = gpu_model_match(first, len(machine.gpus), profiles)
        model = match[1] if match else {}
        entry = {k: model[k] for k in GPU_FACTS if k in model}
        platform_name = VENDOR_PLATFORMS.get(first.vendor, "cuda")
        entry = {"brand": first.vendor, "kind": "gpu", "platform": platform_name, **entry}
        if target := _compute_target(first.compute_cap) or (f"hip:{first.gfx}" if first.gfx else None):
            entry["compute_target"] = target
        if device_model := gpu_model_id(first, match):
            entry["device_model"] = device_model
        count, amd = len(machine.gpus), first.vendor == "AMD"
        return {**entry, "display_name": f"this machine ({count} x {first.name})", "gpu_count": count,
                "vram_gb": _node_gb(sum(g.memory_gib for g in machine.gpus), count, amd), "multi_node": False}
    memory = machine.available_gib if machine.available_gib is not None else machine.memory_gib
    return {"brand": machine.cpu_vendor or "CPU", "generation": "cpu", "kind": "cpu", "platform": "cpu",
            "display_name": f"this machine ({machine.cpu_model})", "gpu_count": 1, "vram_gb": _node_gb(memory),
            "multi_node": False}


def with_this_machine(docs: CatalogDocuments, machine: LocalMachine) -> CatalogDocuments:
    """``docs`` with ``machine`` as hardware ``local`` (in place of a catalog entry of that name)."""
    profiles = dict(docs.taxonomy.get("hardware_profiles") or {})
    profiles[LOCAL] = taxonomy_entry(machine, profiles)
    return replace(docs, taxonomy={**docs.taxonomy, "hardware_profiles": profiles}, typed={})


def _cpuinfo(key: str) -> str | None:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip().lower() == key:
                return value.strip()
    return None


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux), else what the platform module says."""
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def cpu_vendor() -> str:
    vendor = _cpuinfo("vendor_id") or ""
    return CPU_VENDORS.get(vendor, vendor)


def detect() -> LocalMachine:
    import psutil  # only a plan for this machine asks; importing psutil costs every other plan ~25 ms

    memory = psutil.virtual_memory()
    return LocalMachine(
        cpu_model=cpu_model(),
        cores=psutil.cpu_count(logical=False) or psutil.cpu_count() or 1,
        logical_cpus=psutil.cpu_count() or 1,
        memory_gib=round(memory.total / GIB, 2),
        gpus=local_gpus(),
        system=f"{platform.system()} {platform.release()}",
        available_gib=round(memory.available / GIB, 2),
        cpu_vendor=cpu_vendor(),
    )

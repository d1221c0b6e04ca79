"""Hardware ``local``: the machine servekit runs on, detected (CPU model, cores, memory, GPUs),
and the taxonomy entry a plan for it is made with.

GPUs are read from ``nvidia-smi`` when it is on the PATH; a machine without it has none that
servekit can use locally. ``taxonomy_entry`` describes this machine in the taxonomy's terms
(one CPU node, or its GPUs): ``up`` on hardware ``local`` plans for that entry, never for a
catalog default device.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.hardware import LOCAL, nominal_gb_of, profile_of
from servekit.records import record

GIB = 1024**3
GPU_FACTS = ("brand", "generation", "kind", "platform", "compute_target", "compute_arch", "precisions")
"""The facts of a taxonomy GPU entry that hold for every GPU of that model (not its count,
memory or interconnect, which are this machine's own)."""
CPU_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}
"""``vendor_id`` of ``/proc/cpuinfo`` -> brand."""


@record
class Gpu:
    name: str
    memory_gib: float
    compute_cap: str | None = None
    """``major.minor`` as ``nvidia-smi --query-gpu=compute_cap`` prints it (None: not reported)."""


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


def _node_gb(memory_gib: float, devices: int = 1) -> float:
    """The taxonomy's ``vram_gb`` for a node whose ``devices`` have ``memory_gib`` usable in all:
    the inverse of ``servekit.hardware.profile.usable_gib``."""
    return round(nominal_gb_of(memory_gib / devices) * devices, 3)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _names_model(gpu_name: str, display_name: str) -> bool:
    """The display name's words appear together, in order, in the GPU's name
    ("H100" in "NVIDIA H100 80GB HBM3"; "RTX Pro 6000 2x" is not in any single GPU's name)."""
    have, want = _words(gpu_name), _words(display_name)
    return bool(want) and any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def gpu_model_entry(gpu: Gpu, count: int, profiles: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The taxonomy CUDA entry of this GPU's model: the longest display name the GPU's name
    holds; among entries of that name, the one with ``count`` GPUs, else the fewest."""
    found = []
    for hw_id, raw in profiles.items():
        try:
            cuda = profile_of(raw, hw_id).platform == "cuda"
        except (ValueError, TypeError, KeyError):
            continue
        name = str(raw.get("display_name") or "")
        if cuda and _names_model(gpu.name, name):
            found.append((-len(_words(name)), raw.get("gpu_count") != count, raw.get("gpu_count") or 1, hw_id, raw))
    return min(found, key=lambda row: row[:4])[4] if found else None


def _compute_target(cap: str | None) -> str | None:
    """``9.0`` -> ``cuda:sm_90``."""
    major, _, minor = (cap or "").partition(".")
    return f"cuda:sm_{major}{minor}" if major.isdigit() and minor.isdigit() else None


def taxonomy_entry(machine: LocalMachine, profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A taxonomy-shaped entry for ``machine``: its GPUs (the facts of their model's taxonomy
    entry, this machine's count and memory, the compute capability it reports), or one CPU
    node with the memory available now."""
    if machine.gpus:
        first = machine.gpus[0]
        model = gpu_model_entry(first, len(machine.gpus), profiles) or {}
        entry = {k: model[k] for k in GPU_FACTS if k in model}
        entry = {"brand": "NVIDIA", "kind": "gpu", "platform": "cuda", **entry}
        if target := _compute_target(first.compute_cap):
            entry["compute_target"] = target
        return {**entry, "display_name": f"this machine ({len(machine.gpus)} x {first.name})",
                "gpu_count": len(machine.gpus), "vram_gb": _node_gb(sum(g.memory_gib for g in machine.gpus), len(machine.gpus)),
                "multi_node": False}
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


def detect() -> LocalMachine:
    import psutil  # only a plan for this machine asks; importing psutil costs every other plan ~25 ms

    memory = psutil.virtual_memory()
    return LocalMachine(
        cpu_model=cpu_model(),
        cores=psutil.cpu_count(logical=False) or psutil.cpu_count() or 1,
        logical_cpus=psutil.cpu_count() or 1,
        memory_gib=round(memory.total / GIB, 2),
        gpus=nvidia_gpus(),
        system=f"{platform.system()} {platform.release()}",
        available_gib=round(memory.available / GIB, 2),
        cpu_vendor=cpu_vendor(),
    )

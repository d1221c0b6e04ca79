"""Hardware ``local``: the machine servekit runs on, detected (CPU model, cores, memory, GPUs).

GPUs are read from ``nvidia-smi`` when it is on the PATH; a machine without it has none that
servekit can use locally. ``fit_profile`` is the taxonomy-shaped entry the fit check plans for.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

LOCAL = "local"
GIB = 1024**3


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_gib: float


@dataclass(frozen=True)
class LocalMachine:
    cpu_model: str
    cores: int
    logical_cpus: int
    memory_gib: float
    gpus: tuple[Gpu, ...] = ()
    system: str = ""

    @property
    def kind(self) -> str:
        return "gpu" if self.gpus else "cpu"

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["gpus"] = [asdict(g) for g in self.gpus]
        doc["kind"] = self.kind
        return doc

    def fit_profile(self) -> dict[str, Any]:
        """A taxonomy-shaped hardware entry for this machine (one CPU node, or its GPUs)."""
        if self.gpus:
            return {"brand": "NVIDIA", "display_name": self.gpus[0].name, "gpu_count": len(self.gpus),
                    "vram_gb": round(sum(g.memory_gib for g in self.gpus) * GIB / 1e9, 1)}
        return {"brand": "Intel", "generation": "cpu", "kind": "cpu", "platform": "cpu", "cpu_arch": cpu_arch(),
                "display_name": self.cpu_model, "gpu_count": 1, "vram_gb": round(self.memory_gib * GIB / 1e9, 1)}


def cpu_arch() -> str:
    """This machine's instruction set as vLLM's CPU wheels name it (x86_64 or aarch64)."""
    machine = platform.machine().lower()
    return "aarch64" if machine in ("aarch64", "arm64") else "x86_64"


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux), else what the platform module says."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def nvidia_gpus() -> tuple[Gpu, ...]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return ()
    try:
        out = subprocess.run([exe, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(parse_nvidia_smi(out))


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """``name, MiB`` lines as ``nvidia-smi --query-gpu=name,memory.total`` prints them."""
    gpus = []
    for line in text.strip().splitlines():
        name, _, mib = line.rpartition(",")
        try:
            gpus.append(Gpu(name.strip(), round(float(mib) / 1024, 2)))
        except ValueError:
            continue
    return gpus


def detect() -> LocalMachine:
    import psutil  # only a plan for this machine asks; importing psutil costs every other plan ~25 ms

    return LocalMachine(
        cpu_model=cpu_model(),
        cores=psutil.cpu_count(logical=False) or psutil.cpu_count() or 1,
        logical_cpus=psutil.cpu_count() or 1,
        memory_gib=round(psutil.virtual_memory().total / GIB, 2),
        gpus=nvidia_gpus(),
        system=f"{platform.system()} {platform.release()}",
    )

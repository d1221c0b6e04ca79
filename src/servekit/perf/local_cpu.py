"""This machine's CPU as a row of the device speed table: measured, not read from a datasheet.

A CPU has no datasheet figure the speed model can use (its bandwidth and BF16 rate depend on the
part, its memory channels and the threads given), so hardware ``local`` on a CPU machine is
measured: ``servekit.perf.cpu_probe`` runs once in the native engine's environment (its torch,
the one the vLLM CPU server computes with) and the figures are kept under servekit's home
(``cache_file``) for that machine (its name and CPU count); a new machine, or a removed cache,
measures again. ``servekit bench`` measures again before each load (``fresh``): the figures are
the median of the probe's window, the speed the server's steps get with whatever else runs on
the machine at the time, and the prediction the load is set against uses them.

The row's figures are achieved rates (weights streamed through the server's own linear kernel,
per size of weight set, and a large matrix product through it), so the datasheet fractions of
``servekit.perf.constants`` do not apply to them; the CPU backend's own do (a fitted share of
the streamed rate, the product rate whole: ``servekit.perf.launch.rates_for``), and a model's weights stream at the rate measured for a
set of their size (``DeviceCompute.memory_for``): a small model the caches partly hold reads
faster than a large one.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servekit import paths
from servekit.atomic import write_json_atomic
from servekit.engines.environments import find_env
from servekit.engines.registry import native_engine
from servekit.errors import ServekitError
from servekit.hardware.device_compute import DeviceCompute

CACHE_VERSION = 4
PROBE = Path(__file__).with_name("cpu_probe.py")
PROBE_TIMEOUT_S = 300
ROW_ID = "local_cpu"
METHOD = ("measured on this machine by servekit.perf.cpu_probe in the engine environment, on the CPUs and threads "
          "vLLM CPU's auto binding gives its worker, through the linear kernel vLLM CPU's dispatch picks: memory = "
          "the median rate 16 MiB to twice the last-level cache of 2048 x 2048 BF16 weights stream at over 4 rows "
          "(bytes / time, per size); bf16 = the median of 2048 rows through one such layer over 3 s (2 n^3 / time)")


class CpuSpeedError(ServekitError):
    """This machine's CPU cannot be measured."""


def cache_file() -> Path:
    return paths.home() / "hardware" / "cpu-speed.json"


def machine_key(name: str) -> str:
    """What a measurement holds for: the machine's name (its CPU model) and its CPU count."""
    return f"{name}; {os.cpu_count()} CPUs"


def probe_python() -> Path:
    """The native engine environment's interpreter (it has torch); an error with the fix without it."""
    install = native_engine().install
    env = find_env(install.requirement) if install else None
    if env is None:
        requirement = install.requirement if install else "the native engine"
        raise CpuSpeedError(f"this machine's CPU has no speed figures yet: they are measured with the torch of "
                            f"{requirement}, which is not installed",
                            fix=f"servekit engine install {requirement}")
    return Path(env.python)


def run_probe(python: Path) -> dict[str, Any]:
    """The probe's figures, run by ``python``."""
    try:
        done = subprocess.run([str(python), str(PROBE)], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CpuSpeedError(f"measuring this machine's CPU failed: {exc}") from None
    if done.returncode != 0:
        raise CpuSpeedError(f"measuring this machine's CPU failed (exit {done.returncode}): "
                            f"{done.stderr.strip()[-1500:]}")
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise CpuSpeedError(f"the CPU probe printed no figures: {done.stdout[-500:]!r}") from None


def _cached(key: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if doc.get("cache_version") != CACHE_VERSION or doc.get("machine") != key:
        return None
    figures = doc.get("figures") or {}
    ok = all(isinstance(figures.get(k), int | float) and figures[k] > 0 for k in ("memory_gb_s", "bf16_tflops"))
    return doc if ok else None


def cpu_speed(name: str, measure: Callable[[], dict[str, Any]] | None = None, fresh: bool = False) -> dict[str, Any]:
    """The cached measurement of this machine (``name``: its CPU model), measuring it first when
    there is none for it, or when ``fresh``; ``measure`` (default: the probe in the engine
    environment) returns the figures."""
    key = machine_key(name)
    doc = None if fresh else _cached(key)
    if doc is None:
        figures = (measure or (lambda: run_probe(probe_python())))()
        doc = {"cache_version": CACHE_VERSION, "machine": key, "measured_at": time.time(), "method": METHOD,
               "figures": figures}
        write_json_atomic(cache_file(), doc)
    return doc


def cpu_row(doc: dict[str, Any]) -> DeviceCompute:
    """The speed table row of a measurement (no link: one CPU node talks to nothing)."""
    figures = doc["figures"]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(doc.get("measured_at") or 0))
    source = (f"{doc.get('machine')}: memory {figures['memory_gb_s']:.1f} GB/s, BF16 {figures['bf16_tflops']:.3f} "
              f"TFLOPS on {figures.get('threads', '?')} threads (torch {figures.get('torch', '?')}), measured {when}")
    return DeviceCompute(ROW_ID, {"bf16": float(figures["bf16_tflops"])}, float(figures["memory_gb_s"]), "none",
                         0.0, source, measured=str(doc.get("method") or METHOD), stream_gb_s=stream_curve(figures))


def stream_curve(figures: dict[str, Any]) -> tuple[tuple[float, float], ...]:
    """The probe's (MiB, GB/s) per weight set, smallest first; the sizes it could not read are left out."""
    rows = []
    for size, rate in (figures.get("stream_gb_s") or {}).items():
        try:
            mib, gb_s = float(size), float(rate)
        except (TypeError, ValueError):
            continue
        if mib > 0 and gb_s > 0:
            rows.append((mib, gb_s))
    return tuple(sorted(rows))


def speed_change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """Each probe figure measured ``after`` over the same one ``before`` (two ``cpu_speed``
    documents): how the machine's speed moved between the two moments."""
    out = {}
    for key in ("memory_gb_s", "bf16_tflops"):
        old, new = before["figures"].get(key), after["figures"].get(key)
        if isinstance(old, int | float) and isinstance(new, int | float) and old > 0:
            out[key] = round(new / old, 3)
    return out


def local_cpu_row(name: str) -> DeviceCompute:
    return cpu_row(cpu_speed(name))

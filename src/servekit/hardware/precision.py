"""Which number formats a device computes natively, and what follows from it: the one home of
precision-versus-hardware rules.

A profile's ``precisions`` lists the *gated* formats (those some accelerators lack) that the
device runs with native kernels. Formats every accelerator serves (bf16, fp16, int8, int4
weight-only, ...) are never listed. ``None`` means the catalog states nothing for the device
(CPU, TPU, Intel XPU and Ascend backends quantize in their own ways).

Without a ``precisions`` key, the formats are derived:

* NVIDIA, from the generation (tensor-core formats): Ada and Hopper run FP8; Blackwell also
  runs NVFP4 (the catalog's ``fp4``) and MXFP4; Ampere and older run none of them;
* AMD Instinct, from the compute target: gfx942 (MI300X, MI325X) runs FP8, gfx950 (MI350X,
  MI355X) FP8 and MXFP4;
* Cloud AI 100 runs none of them (FP16 and INT8 compute, MX formats as weight compression only);
* every other platform: not stated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from servekit.records import record

if TYPE_CHECKING:
    from servekit.hardware.profile import HardwareProfile

GATED_FORMATS = ("fp8", "nvfp4", "fp4", "mxfp4")
"""Formats a profile's ``precisions`` may list."""

NVIDIA_GENERATION_FORMATS: dict[str, frozenset[str]] = {
    "ada": frozenset({"fp8"}),
    "hopper": frozenset({"fp8"}),
    "blackwell": frozenset({"fp8", "nvfp4", "fp4", "mxfp4"}),
}
TARGET_FORMATS: dict[str, frozenset[str]] = {
    "hip:gfx942": frozenset({"fp8"}),
    "hip:gfx950": frozenset({"fp8", "mxfp4"}),
}
STATED_PLATFORMS = ("cuda", "rocm", "qaic")
"""Platforms whose gated formats are derived when a profile does not list them."""

RENDER_GATED = frozenset({"nvfp4", "fp4"})
"""Variant precisions offered only on hardware that runs them natively, unless the variant's
``precision_hardware`` widens the constraint."""

NATIVE_NEEDS: dict[str, str] = {
    "nvfp4": "NVFP4 kernels need NVIDIA Blackwell (SM100/SM120)",
    "fp8": "FP8 compute needs NVIDIA Ada/Hopper or newer, or AMD MI300 or newer",
    "mxfp4": "true MXFP4 W4A4 needs NVIDIA Blackwell or AMD MI355; elsewhere it runs weight-only",
}
"""Checkpoint precisions a launch checks against the device, and why each needs support."""

WEIGHT_ONLY_FALLBACK: dict[str, tuple[str, ...] | None] = {"fp8": ("cuda",), "mxfp4": None}
"""Formats vLLM still serves weight-only without native kernels: on these platforms (None: on
any). FP8 falls back to the Marlin CUDA kernels."""


PLATFORM_QUANT_REFUSED: dict[str, dict[str, str]] = {
    "tpu": {
        method: "vLLM on TPU serves checkpoints quantized as tpu_int8, compressed-tensors, awq, fp8 or "
                "gpt_oss_mxfp4 (tpu_inference/platforms/tpu_platform.py TpuPlatform.supported_quantization); "
                "vLLM refuses any other method at start-up ('quantization is currently not supported')"
        for method in ("modelopt", "modelopt_fp4")
    },
}
"""Checkpoint quantization methods (``quantization_config.quant_method``) a platform's vLLM refuses,
and why. Only methods no other quantization config claims for the platform are listed (NVIDIA's
ModelOpt formats); a method another config may take over (``override_quantization_method``, e.g.
AWQ and GPTQ checkpoints re-read as Marlin) is not refused here."""


def quant_method_refusal(method: str | None, platform: str) -> str | None:
    """Why the platform's vLLM refuses a checkpoint quantized with ``method``; None when it serves it
    or nothing is stated."""
    return PLATFORM_QUANT_REFUSED.get(platform, {}).get((method or "").lower())


def derive_precisions(platform: str, brand: str, generations: Iterable[str],
                      compute_target: str | None) -> frozenset[str] | None:
    """Gated formats of a profile without a ``precisions`` key (see the module text)."""
    if platform not in STATED_PLATFORMS:
        return None
    if brand.lower() == "nvidia":
        found: set[str] = set()
        for gen in generations:
            found |= NVIDIA_GENERATION_FORMATS.get(gen.lower(), frozenset())
        return frozenset(found)
    return TARGET_FORMATS.get(compute_target or "", frozenset())


def runs_natively(profile: HardwareProfile, precision: str) -> bool:
    return precision in (profile.precisions or ())


def matches_constraint(profile: HardwareProfile, constraint: Mapping[str, Any] | None) -> bool:
    """A variant's ``precision_hardware`` (brand and/or generation) against a profile."""
    if not constraint:
        return True
    if constraint.get("brand") and profile.brand != constraint["brand"]:
        return False
    if constraint.get("generation") and constraint["generation"] not in profile.generations:
        return False
    return True


def needs_native_precision(variant: Mapping[str, Any] | None) -> bool:
    """The variant's precision is one that renders only where it runs natively."""
    return (variant or {}).get("precision") in RENDER_GATED


def variant_precision_supported(profile: HardwareProfile, variant: Mapping[str, Any] | None) -> bool:
    """``precision_hardware`` decides when a variant sets it; else a gated precision must run natively."""
    variant = variant or {}
    explicit = variant.get("precision_hardware")
    if explicit:
        return matches_constraint(profile, explicit)
    return not needs_native_precision(variant) or runs_natively(profile, variant["precision"])


@record
class PrecisionGap:
    """A checkpoint precision the device has no native kernels for."""

    precision: str
    reason: str
    weight_only: bool
    """The engine still serves it, weight-only: a warning rather than an error."""


def precision_gap(precision: str | None, profile: HardwareProfile) -> PrecisionGap | None:
    """Why ``precision`` does not run natively on the device; None when it does or nothing is stated."""
    prec = (precision or "").lower()
    if prec not in NATIVE_NEEDS or profile.precisions is None or prec in profile.precisions:
        return None
    platforms = WEIGHT_ONLY_FALLBACK.get(prec, ())
    weight_only = prec in WEIGHT_ONLY_FALLBACK and (platforms is None or profile.platform in platforms)
    return PrecisionGap(prec, NATIVE_NEEDS[prec], weight_only)


def fp8_kv_cache(profile: HardwareProfile) -> bool | None:
    """FP8 KV-cache kernels (fp8e4nv) on CUDA exist where FP8 compute does; other platforms: not stated."""
    if profile.platform != "cuda":
        return None
    return runs_natively(profile, "fp8")

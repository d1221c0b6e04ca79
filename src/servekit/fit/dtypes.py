"""Bytes per element of model and KV-cache dtypes, as engines spell them."""

from __future__ import annotations

from servekit.errors import ServekitError

_DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "fp32": 4, "float": 4,
    "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1,
    "int8": 1, "mxint8": 1, "uint8": 1,
    "nvfp4": 0.5, "fp4": 0.5,
}

KV_CACHE_DTYPES = ("auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "mxint8", "int8", "nvfp4")


class DtypeError(ServekitError):
    """A dtype name servekit does not know the size of."""


_FAMILY_BYTES = (("float8", 1), ("fp8", 1), ("mxfp8", 1), ("int8", 1), ("fp4", 0.5), ("int4", 0.5), ("mxfp6", 0.75))


def dtype_bytes(name: str) -> float:
    key = name.lower().removeprefix("torch.")
    if key in _DTYPE_BYTES:
        return _DTYPE_BYTES[key]
    for prefix, size in _FAMILY_BYTES:  # fp8_e4m3fn, float8_e5m2, nvfp4, ...
        if key.startswith(prefix) or key.endswith(prefix):
            return size
    raise DtypeError(f"unknown dtype {name!r}", fix=f"use one of: {', '.join(sorted(_DTYPE_BYTES))}")


def kv_dtype_bytes(kv_cache_dtype: str | None, model_dtype: str) -> float:
    """Bytes per KV element: ``auto`` (or none) follows the model's dtype."""
    if not kv_cache_dtype or kv_cache_dtype == "auto":
        return dtype_bytes(model_dtype)
    return dtype_bytes(kv_cache_dtype)

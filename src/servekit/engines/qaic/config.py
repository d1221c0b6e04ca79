"""Facts about vLLM's QAIC ``--additional-config``: fields, aliases, defaults, hardware.

``override_qaic_config`` (and ``draft_override_qaic_config`` for the speculative draft) hold
``qaic-compile`` settings; several fields have aliases that mean the same setting. VLM
``height`` / ``width`` sit beside them at the top level. Everything here is data plus small
pure helpers; the rules that judge a config live in ``qaic_rules``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from servekit.hardware import profile_of
from servekit.records import record

TARGET_KEY = "override_qaic_config"
DRAFT_KEY = "draft_override_qaic_config"
VLM_KEYS = ("height", "width")
TOP_LEVEL_KEYS = (TARGET_KEY, DRAFT_KEY, *VLM_KEYS)

DEFAULT_NUM_CORES = 16
DEFAULT_SHARED_DRAFT_CORES = 8  # draft on the target's device group

# canonical field -> every spelling the plugin accepts (canonical first)
ALIASES: dict[str, tuple[str, ...]] = {
    "num_cores": ("num_cores", "aic_num_cores"),
    "dfs": ("dfs", "aic_enable_depth_first"),
    "mxint8": ("mxint8", "mxint8_en", "mxint8_kv_cache"),
    "mxfp6": ("mxfp6", "mxfp6_matmul", "mxfp6_en"),
    "device_group": ("device_group", "device_ids", "device_id"),
}
# canonical field -> QEfficient compile keyword
COMPILE_NAMES = {
    "num_cores": "num_cores",
    "dfs": "aic_enable_depth_first",
    "mxint8": "mxint8_kv_cache",
    "mxfp6": "mxfp6_matmul",
}
DOCUMENTED_FIELDS = frozenset(
    {spelling for names in ALIASES.values() for spelling in names}
    | {
        "mos",
        "num_devices",
        "mdts_mos",
        "embed_seq_len",
        "comp_ctx_lengths_prefill",
        "comp_ctx_lengths_decode",
        "ccl_enabled",
        "num_patches",
        "height",
        "width",
        "kv_offload",
        "pooling_device",
        "pooling_method",
        "normalize",
        "softmax",
        "prefill_only",
        "qpc_path",
        "compiler_args",
    }
)
# Set from vLLM's own arguments; the plugin ignores them inside override_qaic_config.
FROM_VLLM_ARGS = {
    "ctx_len": "--max-model-len",
    "batch_size": "--max-num-seqs",
    "full_batch_size": "--max-num-seqs",
    "num_speculative_tokens": "--speculative-config num_speculative_tokens",
}
BOOLEAN_FIELDS = ("dfs", "mxint8", "mxfp6", "ccl_enabled", "kv_offload", "normalize", "softmax")
POOLING_DEVICES = ("qaic", "cpu")
POOLING_METHODS = ("mean", "avg", "cls", "max")
QAIC_ONLY_POOLING = ("pooling_method", "normalize", "softmax")
CCL_FIELDS = ("comp_ctx_lengths_prefill", "comp_ctx_lengths_decode")
# Speculative methods that run without a separate draft model (nothing to place on devices).
DRAFTLESS_METHODS = ("ngram", "suffix")


def canonical(field: str) -> str:
    """The canonical name of a field spelling (itself when it has no aliases)."""
    key = field.lower().replace("-", "_").strip()
    for name, spellings in ALIASES.items():
        if key in spellings:
            return name
    return key


def spellings_present(config: Mapping[str, Any], name: str) -> list[str]:
    return [s for s in ALIASES.get(name, (name,)) if s in config]


def field_value(config: Mapping[str, Any], name: str) -> Any:
    """The value of a canonical field under any of its spellings (first found), or None."""
    for spelling in ALIASES.get(name, (name,)):
        if spelling in config:
            return config[spelling]
    return None


def device_group(config: Mapping[str, Any]) -> list[int] | None:
    value = field_value(config, "device_group")
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def device_count(config: Mapping[str, Any]) -> int | None:
    group = device_group(config)
    if group is not None:
        return len(group)
    num = config.get("num_devices")
    return num if isinstance(num, int) and not isinstance(num, bool) else None


def render_json(config: Mapping[str, Any]) -> str:
    """The compact JSON form used on the command line."""
    return json.dumps(config, separators=(",", ":"))


@record
class QaicHardware:
    """A Cloud AI 100 profile's facts; unknown facts are None and their checks are skipped."""

    soc_count: int | None = None
    nsp_cores_per_soc: int = DEFAULT_NUM_CORES
    memory_gb_per_soc: float | None = None

    @classmethod
    def from_profile(cls, profile: Mapping[str, Any] | None) -> QaicHardware:
        """The SoC layout of the profile (``HardwareProfile.socs``); the engine default NSP cores when unstated."""
        socs = profile_of(profile).socs if profile else None
        if socs is None:
            return cls()
        return cls(
            soc_count=socs.soc_count,
            nsp_cores_per_soc=socs.nsp_cores_per_soc or DEFAULT_NUM_CORES,
            memory_gb_per_soc=socs.memory_gb_per_soc,
        )


def is_qaic_profile(profile: Mapping[str, Any] | None) -> bool:
    return bool(profile) and profile_of(profile).platform == "qaic"


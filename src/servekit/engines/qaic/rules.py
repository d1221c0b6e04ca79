"""Rules for a vLLM launch on Qualcomm Cloud AI 100: each violation names the field, what is
wrong and the fix.

``check_launch`` covers the vLLM options (PYT vs AOT mode, TP size = number of QIDs, MXFP6 /
MXINT8); ``check_additional_config`` covers ``--additional-config`` (aliases that disagree,
num_devices vs device_group, SpD vs multimodal, pooling, prefill_only, CCL lists, hardware).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.qaic.config import (
    DEFAULT_NUM_CORES,
    DEFAULT_SHARED_DRAFT_CORES,
    DRAFT_KEY,
    TARGET_KEY,
    TOP_LEVEL_KEYS,
    VLM_KEYS,
    QaicHardware,
    device_count,
    device_group,
    field_value,
)
from servekit.engines.qaic.fields import OPT, check_section, is_int
from servekit.engines.vllm.launch import VllmLaunch

MODES = ("aot", "pyt")


def check_launch(launch: VllmLaunch, config: Mapping[str, Any], mode: str) -> list[Finding]:
    if mode not in MODES:
        return [finding(ERROR, "qaic.mode", f"QAIC mode {mode!r} is not aot or pyt", fix="pass --qaic-mode aot or --qaic-mode pyt")]
    out = _aot_findings(launch) if mode == "aot" else _pyt_findings(launch)
    out += _format_findings(launch)
    out += _shape_findings(launch, config)
    return out


def _aot_findings(launch: VllmLaunch) -> list[Finding]:
    """AOT mode runs a compiled QPC: memory and eager settings have no effect."""
    out: list[Finding] = []
    if launch.has("--gpu-memory-utilization"):
        out.append(
            finding(
                WARNING,
                "qaic.aot-memory",
                "--gpu-memory-utilization has no effect in AOT mode: the KV cache is sized by the compiled QPC",
                option="--gpu-memory-utilization",
                fix="drop it, or size the cache with --max-num-seqs and --max-model-len",
            )
        )
    if launch.switch("--enforce-eager"):
        out.append(finding(NOTE, "qaic.aot-eager", "--enforce-eager has no effect in AOT mode", option="--enforce-eager"))
    return out


def _pyt_findings(launch: VllmLaunch) -> list[Finding]:
    """PYT mode needs eager execution and async scheduling off."""
    out: list[Finding] = []
    if not launch.switch("--enforce-eager"):
        out.append(
            finding(
                ERROR,
                "qaic.pyt-eager",
                "PYT mode requires eager execution",
                option="--enforce-eager",
                fix="add --enforce-eager",
            )
        )
    async_sched = launch.switch("--async-scheduling")
    if async_sched:
        out.append(
            finding(
                ERROR,
                "qaic.pyt-async",
                "PYT mode does not support async scheduling",
                option="--async-scheduling",
                fix="replace it with --no-async-scheduling",
            )
        )
    elif async_sched is None:
        out.append(
            finding(
                WARNING,
                "qaic.pyt-async",
                "PYT mode needs async scheduling off; vLLM may turn it on",
                option="--async-scheduling",
                fix="add --no-async-scheduling",
            )
        )
    return out


def _format_findings(launch: VllmLaunch) -> list[Finding]:
    """QAIC computes in MXFP6 and keeps its KV cache in MXINT8."""
    out: list[Finding] = []
    quant = launch.get("--quantization")
    if quant is None:
        out.append(
            finding(
                NOTE,
                "qaic.mxfp6",
                "no --quantization: weights compile in FP16",
                option="--quantization",
                fix="add --quantization mxfp6 for QAIC's native MXFP6 matmuls",
            )
        )
    elif quant != "mxfp6":
        out.append(
            finding(
                WARNING,
                "qaic.quantization",
                f"--quantization {quant} is not QAIC's compute format",
                option="--quantization",
                fix="use --quantization mxfp6 with the unquantized checkpoint",
            )
        )
    kv = launch.get("--kv-cache-dtype")
    if kv not in (None, "auto", "mxint8"):
        out.append(
            finding(
                WARNING,
                "qaic.kv-cache-dtype",
                f"--kv-cache-dtype {kv} is not a QAIC KV format",
                option="--kv-cache-dtype",
                fix="use --kv-cache-dtype mxint8",
            )
        )
    return out


def _shape_findings(launch: VllmLaunch, config: Mapping[str, Any]) -> list[Finding]:
    """What the compiled program fixes: context length, device count, decode batch; LoRA vs SpD."""
    out: list[Finding] = []
    if launch.get_length("--max-model-len") is None:
        out.append(
            finding(
                WARNING,
                "qaic.max-model-len",
                "QAIC compiles a fixed context length; none is given",
                option="--max-model-len",
                fix="set --max-model-len to the context the QPC is built for",
            )
        )
    tp = launch.get_int("--tensor-parallel-size")
    qids = device_count(config.get(TARGET_KEY) or {}) if isinstance(config.get(TARGET_KEY), Mapping) else None
    if tp is not None and qids is not None and tp != qids:
        out.append(
            finding(
                ERROR,
                "qaic.tp-qids",
                f"--tensor-parallel-size {tp} but the device group has {qids} QIDs",
                option="--tensor-parallel-size",
                fix=f"TP size is the number of QIDs: use --tensor-parallel-size {qids} or list {tp} devices",
            )
        )
    if launch.switch("--enable-lora") and launch.has("--speculative-config"):
        out.append(
            finding(
                ERROR,
                "qaic.lora-spd",
                "LoRA and speculative decoding cannot run together on QAIC",
                option="--enable-lora",
                fix="drop --enable-lora or --speculative-config",
            )
        )
    seqs = launch.get_int("--max-num-seqs")
    if seqs is not None and seqs > 16:
        out.append(
            finding(
                NOTE,
                "qaic.decode-batch",
                f"--max-num-seqs {seqs} compiles a large decode batch into the QPC",
                option="--max-num-seqs",
                fix="start with 4-16 and raise it while the device memory allows",
            )
        )
    return out


def check_additional_config(
    config: Any, launch: VllmLaunch, hardware: QaicHardware, *, multimodal: bool = False
) -> list[Finding]:
    if not isinstance(config, Mapping):
        return [
            finding(
                ERROR,
                "qaic.config-type",
                "--additional-config is not a JSON object",
                option=OPT,
                fix='pass an object such as {"override_qaic_config":{"device_group":[0],"num_cores":16}}',
            )
        ]
    out: list[Finding] = []
    for key in config:
        if key not in TOP_LEVEL_KEYS:
            out.append(
                finding(
                    WARNING,
                    "qaic.unknown-key",
                    f"additional_config key {key!r} is not a QAIC setting",
                    option=OPT,
                    fix=f"use one of {', '.join(TOP_LEVEL_KEYS)}",
                )
            )
    max_len = launch.get_length("--max-model-len")
    target, draft = config.get(TARGET_KEY), config.get(DRAFT_KEY)
    for key, section in ((TARGET_KEY, target), (DRAFT_KEY, draft)):
        if section is None:
            continue
        if not isinstance(section, Mapping):
            out.append(
                finding(
                    ERROR,
                    "qaic.section-type",
                    f"{key} is not a JSON object",
                    option=OPT,
                    fix=f'write {key} as {{"device_group":[0],"num_cores":16}}',
                )
            )
            continue
        out += check_section(key, section, hardware, max_len)
    out += _check_vlm(config, target)
    has_vlm = any(k in config for k in VLM_KEYS) or (isinstance(target, Mapping) and any(k in target for k in VLM_KEYS))
    spd = draft is not None or launch.has("--speculative-config")
    if spd and (has_vlm or multimodal):
        out.append(
            finding(
                ERROR,
                "qaic.spd-multimodal",
                "speculative decoding and multimodal (height/width) are mutually exclusive on QAIC",
                option=OPT,
                fix="drop draft_override_qaic_config/--speculative-config, or height/width",
            )
        )
    if draft is not None and not launch.has("--speculative-config"):
        out.append(
            finding(
                WARNING,
                "qaic.draft-unused",
                f"{DRAFT_KEY} is set but there is no --speculative-config",
                option=OPT,
                fix="add --speculative-config or drop the draft section",
            )
        )
    if isinstance(target, Mapping) and isinstance(draft, Mapping):
        out += _check_shared_cores(target, draft, hardware)
    if launch.switch("--enable-mm-embeds") and not (isinstance(target, Mapping) and target.get("kv_offload") is True):
        out.append(
            finding(
                NOTE,
                "qaic.mm-embeds",
                "--enable-mm-embeds serves embedding input in kv_offload VLM mode",
                option="--enable-mm-embeds",
                fix='set "kv_offload": true in override_qaic_config',
            )
        )
    return out


def _check_vlm(config: Mapping[str, Any], target: Any) -> list[Finding]:
    out: list[Finding] = []
    where = config if any(k in config for k in VLM_KEYS) else target if isinstance(target, Mapping) else {}
    dims = {k: where.get(k) for k in VLM_KEYS if k in where}
    for name, value in dims.items():
        if not (isinstance(value, list) and value and all(is_int(v) and v > 0 for v in value)):
            out.append(
                finding(
                    ERROR,
                    "qaic.vlm-dims",
                    f"{name} {value!r} is not a list of image sizes in pixels",
                    option=OPT,
                    fix=f"write {name} as a list such as [364, 512]",
                )
            )
    if len(dims) == 1:
        missing = "width" if "height" in dims else "height"
        out.append(
            finding(
                ERROR,
                "qaic.vlm-pair",
                f"{missing} is missing; heights and widths compile as pairs",
                option=OPT,
                fix=f"give {missing} with one entry per {next(iter(dims))} entry",
            )
        )
    elif len(dims) == 2 and all(isinstance(v, list) for v in dims.values()):
        if len(dims["height"]) != len(dims["width"]):
            out.append(
                finding(
                    ERROR,
                    "qaic.vlm-pair",
                    f"height has {len(dims['height'])} entries but width has {len(dims['width'])}",
                    option=OPT,
                    fix="give one width per height",
                )
            )
    return out


def _check_shared_cores(target: Mapping[str, Any], draft: Mapping[str, Any], hardware: QaicHardware) -> list[Finding]:
    t_group, d_group = device_group(target), device_group(draft)
    if t_group is None or d_group is None or not set(t_group) & set(d_group):
        return []
    t_cores = field_value(target, "num_cores") or DEFAULT_NUM_CORES
    d_cores = field_value(draft, "num_cores") or DEFAULT_SHARED_DRAFT_CORES
    if is_int(t_cores) and is_int(d_cores) and t_cores + d_cores > hardware.nsp_cores_per_soc:
        return [
            finding(
                WARNING,
                "qaic.shared-cores",
                f"target ({t_cores}) and draft ({d_cores}) NSP cores share "
                f"devices {sorted(set(t_group) & set(d_group))} and exceed {hardware.nsp_cores_per_soc} per SoC",
                option=OPT,
                fix=f"split the cores, e.g. {hardware.nsp_cores_per_soc - d_cores} + {d_cores}",
            )
        ]
    return []

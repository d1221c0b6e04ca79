"""Rules for a vLLM launch on Qualcomm Cloud AI 100: each violation names the field, what is
wrong and the fix.

``check_launch`` covers the vLLM options (PYT vs AOT mode, TP size = number of QIDs, MXFP6 /
MXINT8); ``check_additional_config`` covers ``--additional-config`` (aliases that disagree,
num_devices vs device_group, SpD vs multimodal, pooling, prefill_only, CCL lists, hardware).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servekit.engines.dialect import ERROR, NOTE, WARNING, finding
from servekit.engines.findings import Finding
from servekit.engines.qaic_config import (
    ALIASES,
    BOOLEAN_FIELDS,
    CCL_FIELDS,
    DEFAULT_NUM_CORES,
    DEFAULT_SHARED_DRAFT_CORES,
    DOCUMENTED_FIELDS,
    DRAFT_KEY,
    FROM_VLLM_ARGS,
    POOLING_DEVICES,
    POOLING_METHODS,
    QAIC_ONLY_POOLING,
    TARGET_KEY,
    TOP_LEVEL_KEYS,
    VLM_KEYS,
    QaicHardware,
    device_count,
    device_group,
    field_value,
    spellings_present,
)
from servekit.engines.vllm_launch import VllmLaunch

MODES = ("aot", "pyt")
OPT = "--additional-config"


def check_launch(launch: VllmLaunch, config: Mapping[str, Any], mode: str) -> list[Finding]:
    out: list[Finding] = []
    if mode not in MODES:
        return [finding(ERROR, "qaic.mode", f"QAIC mode {mode!r} is not aot or pyt", fix="use mode aot or pyt")]
    if mode == "aot":
        if launch.has("--gpu-memory-utilization"):
            out.append(finding(WARNING, "qaic.aot-memory", "--gpu-memory-utilization has no effect in AOT mode: the "
                               "KV cache is sized by the compiled QPC", option="--gpu-memory-utilization",
                               fix="drop it, or size the cache with --max-num-seqs and --max-model-len"))
        if launch.switch("--enforce-eager"):
            out.append(finding(NOTE, "qaic.aot-eager", "--enforce-eager has no effect in AOT mode", option="--enforce-eager"))
    else:
        if not launch.switch("--enforce-eager"):
            out.append(finding(ERROR, "qaic.pyt-eager", "PYT mode requires eager execution", option="--enforce-eager",
                               fix="add --enforce-eager"))
        async_sched = launch.switch("--async-scheduling")
        if async_sched:
            out.append(finding(ERROR, "qaic.pyt-async", "PYT mode does not support async scheduling",
                               option="--async-scheduling", fix="replace it with --no-async-scheduling"))
        elif async_sched is None:
            out.append(finding(WARNING, "qaic.pyt-async", "PYT mode needs async scheduling off; vLLM may turn it on",
                               option="--async-scheduling", fix="add --no-async-scheduling"))
    quant = launch.get("--quantization")
    if quant is None:
        out.append(finding(NOTE, "qaic.mxfp6", "no --quantization: weights compile in FP16",
                           option="--quantization", fix="add --quantization mxfp6 for QAIC's native MXFP6 matmuls"))
    elif quant != "mxfp6":
        out.append(finding(WARNING, "qaic.quantization", f"--quantization {quant} is not QAIC's compute format",
                           option="--quantization", fix="use --quantization mxfp6 with the unquantized checkpoint"))
    kv = launch.get("--kv-cache-dtype")
    if kv not in (None, "auto", "mxint8"):
        out.append(finding(WARNING, "qaic.kv-cache-dtype", f"--kv-cache-dtype {kv} is not a QAIC KV format",
                           option="--kv-cache-dtype", fix="use --kv-cache-dtype mxint8"))
    if launch.get("--max-model-len") is None:
        out.append(finding(WARNING, "qaic.max-model-len", "QAIC compiles a fixed context length; none is given",
                           option="--max-model-len", fix="set --max-model-len to the context the QPC is built for"))
    tp = launch.get_int("--tensor-parallel-size")
    qids = device_count(config.get(TARGET_KEY) or {}) if isinstance(config.get(TARGET_KEY), Mapping) else None
    if tp is not None and qids is not None and tp != qids:
        out.append(finding(ERROR, "qaic.tp-qids", f"--tensor-parallel-size {tp} but the device group has {qids} QIDs",
                           option="--tensor-parallel-size",
                           fix=f"TP size is the number of QIDs: use --tensor-parallel-size {qids} or list {tp} devices"))
    if launch.switch("--enable-lora") and launch.has("--speculative-config"):
        out.append(finding(ERROR, "qaic.lora-spd", "LoRA and speculative decoding cannot run together on QAIC",
                           option="--enable-lora", fix="drop --enable-lora or --speculative-config"))
    return out


def check_additional_config(
    config: Any, launch: VllmLaunch, hardware: QaicHardware, *, multimodal: bool = False
) -> list[Finding]:
    if not isinstance(config, Mapping):
        return [finding(ERROR, "qaic.config-type", "--additional-config is not a JSON object", option=OPT,
                        fix='pass an object such as {"override_qaic_config":{"device_group":[0],"num_cores":16}}')]
    out: list[Finding] = []
    for key in config:
        if key not in TOP_LEVEL_KEYS:
            out.append(finding(WARNING, "qaic.unknown-key", f"additional_config key {key!r} is not a QAIC setting",
                               option=OPT, fix=f"use one of {', '.join(TOP_LEVEL_KEYS)}"))
    max_len = launch.get_int("--max-model-len")
    target, draft = config.get(TARGET_KEY), config.get(DRAFT_KEY)
    for key, section in ((TARGET_KEY, target), (DRAFT_KEY, draft)):
        if section is None:
            continue
        if not isinstance(section, Mapping):
            out.append(finding(ERROR, "qaic.section-type", f"{key} is not a JSON object", option=OPT,
                               fix=f'write {key} as {{"device_group":[0],"num_cores":16}}'))
            continue
        out += check_section(key, section, hardware, max_len)
    out += _check_vlm(config, target)
    has_vlm = any(k in config for k in VLM_KEYS) or (
        isinstance(target, Mapping) and any(k in target for k in VLM_KEYS)
    )
    spd = draft is not None or launch.has("--speculative-config")
    if spd and (has_vlm or multimodal):
        out.append(finding(ERROR, "qaic.spd-multimodal", "speculative decoding and multimodal (height/width) are "
                           "mutually exclusive on QAIC", option=OPT,
                           fix="drop draft_override_qaic_config/--speculative-config, or height/width"))
    if draft is not None and not launch.has("--speculative-config"):
        out.append(finding(WARNING, "qaic.draft-unused", f"{DRAFT_KEY} is set but there is no --speculative-config",
                           option=OPT, fix="add --speculative-config or drop the draft section"))
    if isinstance(target, Mapping) and isinstance(draft, Mapping):
        out += _check_shared_cores(target, draft, hardware)
    return out


def check_section(key: str, section: Mapping[str, Any], hardware: QaicHardware, max_len: int | None) -> list[Finding]:
    out: list[Finding] = []
    for name, spellings in ALIASES.items():
        present = [s for s in spellings if s in section]
        values = {repr(section[s]) for s in present}
        if len(values) > 1:
            shown = ", ".join(f"{s}={section[s]!r}" for s in present)
            out.append(finding(ERROR, "qaic.alias-conflict", f"{key}: {shown} name the same setting with different "
                               "values", option=OPT, fix=f"keep only {name}"))
        elif len(present) > 1:
            out.append(finding(WARNING, "qaic.alias-duplicate", f"{key}: {', '.join(present)} repeat one setting",
                               option=OPT, fix=f"keep only {name}"))
    out += _check_devices(key, section, hardware)
    cores = field_value(section, "num_cores")
    if cores is not None and not (_is_int(cores) and 1 <= cores <= hardware.nsp_cores_per_soc):
        out.append(finding(ERROR, "qaic.num-cores", f"{key}: num_cores {cores!r} is not 1..{hardware.nsp_cores_per_soc}",
                           option=OPT, fix=f"use at most {hardware.nsp_cores_per_soc} NSP cores per device"))
    for name in BOOLEAN_FIELDS:
        for spelling in spellings_present(section, name):
            if not isinstance(section[spelling], bool):
                out.append(finding(ERROR, "qaic.bool-field", f"{key}: {spelling} must be true or false, not "
                                   f"{section[spelling]!r}", option=OPT, fix=f"write {spelling} as a JSON boolean"))
    for name in ("mos", "mdts_mos"):
        value = section.get(name)
        if value is not None and not (_is_int(value) and (value == -1 or value >= 1)):
            out.append(finding(ERROR, "qaic.mos", f"{key}: {name} {value!r} is not -1 or a positive integer",
                               option=OPT, fix=f"use {name}: -1 (off) or a split degree such as 2"))
    if spellings_present(section, "mxfp6"):
        out.append(finding(NOTE, "qaic.prefer-quantization", f"{key}: prefer --quantization mxfp6 to the mxfp6 field",
                           option=OPT, fix="drop the field and pass --quantization mxfp6"))
    if spellings_present(section, "mxint8"):
        out.append(finding(NOTE, "qaic.prefer-kv-dtype", f"{key}: prefer --kv-cache-dtype mxint8 to the mxint8 field",
                           option=OPT, fix="drop the field and pass --kv-cache-dtype mxint8"))
    for name, flag in FROM_VLLM_ARGS.items():
        if name in section:
            out.append(finding(WARNING, "qaic.ignored-field", f"{key}: {name} is ignored here; it comes from {flag}",
                               option=OPT, fix=f"drop {name} and set {flag}"))
    for name in section:
        if name not in DOCUMENTED_FIELDS and name not in FROM_VLLM_ARGS:
            out.append(finding(NOTE, "qaic.compiler-field", f"{key}: {name} is passed to the compiler as is",
                               option=OPT, fix="check the name against the QEfficient compile API"))
    out += _check_prefill_only(key, section)
    out += _check_pooling(key, section)
    out += _check_lengths(key, section, max_len)
    return out


def _check_devices(key: str, section: Mapping[str, Any], hardware: QaicHardware) -> list[Finding]:
    out: list[Finding] = []
    raw = field_value(section, "device_group")
    group = device_group(section)
    if raw is not None and (group is None or any(d < 0 for d in group)):
        return [finding(ERROR, "qaic.device-group", f"{key}: device_group {raw!r} is not a list of QIDs", option=OPT,
                        fix="list device ids, e.g. [0, 1, 2, 3]")]
    if group is not None and len(set(group)) != len(group):
        out.append(finding(ERROR, "qaic.device-duplicate", f"{key}: device_group {group} repeats a QID", option=OPT,
                           fix="list each device once"))
    num = section.get("num_devices")
    if num is not None and not (_is_int(num) and num >= 1):
        out.append(finding(ERROR, "qaic.num-devices", f"{key}: num_devices {num!r} is not a positive integer",
                           option=OPT, fix="give a device count such as 4"))
    elif num is not None and group is not None:
        if num != len(group):
            out.append(finding(ERROR, "qaic.devices-conflict", f"{key}: num_devices {num} but device_group lists "
                               f"{len(group)} QIDs", option=OPT, fix="provide either num_devices or device_group"))
        else:
            out.append(finding(WARNING, "qaic.devices-both", f"{key}: num_devices and device_group both given",
                               option=OPT, fix="provide either num_devices or device_group, not both"))
    if group is not None and hardware.soc_count is not None:
        outside = [d for d in group if d >= hardware.soc_count]
        if outside:
            out.append(finding(ERROR, "qaic.device-range", f"{key}: QIDs {outside} do not exist on "
                               f"{hardware.soc_count} SoCs", option=OPT,
                               fix=f"use QIDs 0..{hardware.soc_count - 1}"))
    return out


def _check_prefill_only(key: str, section: Mapping[str, Any]) -> list[Finding]:
    if "prefill_only" in section and not any(section["prefill_only"] is v for v in (True, False, None)):
        return [finding(ERROR, "qaic.prefill-only", f"{key}: prefill_only {section['prefill_only']!r} must be true "
                        "(prefill QPC), false (decode QPC) or null (one QPC for both)", option=OPT,
                        fix="write prefill_only as a JSON true, false or null")]
    return []


def _check_pooling(key: str, section: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    device = section.get("pooling_device")
    if device is not None and device not in POOLING_DEVICES:
        out.append(finding(ERROR, "qaic.pooling-device", f"{key}: pooling_device {device!r} is not qaic or cpu",
                           option=OPT, fix='use "qaic" or "cpu"'))
    for name in QAIC_ONLY_POOLING:
        if name in section and device != "qaic":
            out.append(finding(ERROR, "qaic.pooling-qaic-only", f"{key}: {name} applies to qaic pooling only",
                               option=OPT, fix='set pooling_device to "qaic" or drop ' + name))
    method = section.get("pooling_method")
    if method is not None and not isinstance(method, str):
        out.append(finding(ERROR, "qaic.pooling-method", f"{key}: pooling_method {method!r} is not a name",
                           option=OPT, fix=f"use one of {', '.join(POOLING_METHODS)} or a custom method name"))
    elif method is not None and method not in POOLING_METHODS:
        out.append(finding(NOTE, "qaic.pooling-custom", f"{key}: pooling_method {method!r} is a custom method",
                           option=OPT, fix=f"built-in methods are {', '.join(POOLING_METHODS)}"))
    return out


def _check_lengths(key: str, section: Mapping[str, Any], max_len: int | None) -> list[Finding]:
    out: list[Finding] = []
    for name in (*CCL_FIELDS, "embed_seq_len"):
        if name not in section:
            continue
        value = section[name]
        if not (isinstance(value, list) and value and all(_is_int(v) and v > 0 for v in value)):
            out.append(finding(ERROR, "qaic.length-list", f"{key}: {name} {value!r} is not a non-empty list of "
                               "positive token counts", option=OPT, fix=f"write {name} as a list such as [1024, 2048]"))
            continue
        if name in CCL_FIELDS and max_len is not None and any(v > max_len for v in value):
            out.append(finding(ERROR, "qaic.ccl-length", f"{key}: {name} {value} exceeds --max-model-len {max_len}",
                               option=OPT, fix=f"keep every length at or below {max_len}"))
        if name == "embed_seq_len" and max_len is not None and max_len not in value:
            out.append(finding(ERROR, "qaic.embed-seq-len", f"{key}: embed_seq_len {value} lacks --max-model-len "
                               f"{max_len}", option=OPT, fix=f"add {max_len} to embed_seq_len"))
    if section.get("ccl_enabled") is True and any(n in section for n in CCL_FIELDS):
        out.append(finding(NOTE, "qaic.ccl-explicit", f"{key}: ccl_enabled only generates lists that are not given; "
                           "the explicit comp_ctx_lengths lists are used", option=OPT))
    return out


def _check_vlm(config: Mapping[str, Any], target: Any) -> list[Finding]:
    out: list[Finding] = []
    where = config if any(k in config for k in VLM_KEYS) else target if isinstance(target, Mapping) else {}
    dims = {k: where.get(k) for k in VLM_KEYS if k in where}
    for name, value in dims.items():
        if not (isinstance(value, list) and value and all(_is_int(v) and v > 0 for v in value)):
            out.append(finding(ERROR, "qaic.vlm-dims", f"{name} {value!r} is not a list of image sizes in pixels",
                               option=OPT, fix=f"write {name} as a list such as [364, 512]"))
    if len(dims) == 1:
        missing = "width" if "height" in dims else "height"
        out.append(finding(ERROR, "qaic.vlm-pair", f"{missing} is missing; heights and widths compile as pairs",
                           option=OPT, fix=f"give {missing} with one entry per {next(iter(dims))} entry"))
    elif len(dims) == 2 and all(isinstance(v, list) for v in dims.values()):
        if len(dims["height"]) != len(dims["width"]):
            out.append(finding(ERROR, "qaic.vlm-pair", f"height has {len(dims['height'])} entries but width has "
                               f"{len(dims['width'])}", option=OPT, fix="give one width per height"))
    return out


def _check_shared_cores(target: Mapping[str, Any], draft: Mapping[str, Any], hardware: QaicHardware) -> list[Finding]:
    t_group, d_group = device_group(target), device_group(draft)
    if t_group is None or d_group is None or not set(t_group) & set(d_group):
        return []
    t_cores = field_value(target, "num_cores") or DEFAULT_NUM_CORES
    d_cores = field_value(draft, "num_cores") or DEFAULT_SHARED_DRAFT_CORES
    if _is_int(t_cores) and _is_int(d_cores) and t_cores + d_cores > hardware.nsp_cores_per_soc:
        return [finding(WARNING, "qaic.shared-cores", f"target ({t_cores}) and draft ({d_cores}) NSP cores share "
                        f"devices {sorted(set(t_group) & set(d_group))} and exceed {hardware.nsp_cores_per_soc} per SoC",
                        option=OPT, fix=f"split the cores, e.g. {hardware.nsp_cores_per_soc - d_cores} + {d_cores}")]
    return []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

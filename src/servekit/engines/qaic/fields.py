"""Rules for one ``override_qaic_config`` / ``draft_override_qaic_config`` section: aliases,
devices, cores, booleans, MOS degrees, pooling, prefill_only, CCL and embedding lengths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.qaic.config import (
    ALIASES,
    BOOLEAN_FIELDS,
    CCL_FIELDS,
    DOCUMENTED_FIELDS,
    FROM_VLLM_ARGS,
    POOLING_DEVICES,
    POOLING_METHODS,
    QAIC_ONLY_POOLING,
    QaicHardware,
    device_group,
    field_value,
    spellings_present,
)

OPT = "--additional-config"


def check_section(key: str, section: Mapping[str, Any], hardware: QaicHardware, max_len: int | None) -> list[Finding]:
    out = _check_aliases(key, section)
    out += _check_devices(key, section, hardware)
    out += _check_cores(key, section, hardware)
    out += _check_values(key, section)
    out += _check_field_names(key, section)
    out += _check_prefill_only(key, section)
    out += _check_pooling(key, section)
    out += _check_lengths(key, section, max_len)
    return out


def _check_aliases(key: str, section: Mapping[str, Any]) -> list[Finding]:
    """Spellings of one setting given together: with different values, or repeated."""
    out: list[Finding] = []
    for name, spellings in ALIASES.items():
        present = [s for s in spellings if s in section]
        values = {repr(section[s]) for s in present}
        if len(values) > 1:
            shown = ", ".join(f"{s}={section[s]!r}" for s in present)
            out.append(
                finding(
                    ERROR,
                    "qaic.alias-conflict",
                    f"{key}: {shown} name the same setting with different values",
                    option=OPT,
                    fix=f"keep only {name}",
                )
            )
        elif len(present) > 1:
            out.append(
                finding(
                    WARNING,
                    "qaic.alias-duplicate",
                    f"{key}: {', '.join(present)} repeat one setting",
                    option=OPT,
                    fix=f"keep only {name}",
                )
            )
    return out


def _check_cores(key: str, section: Mapping[str, Any], hardware: QaicHardware) -> list[Finding]:
    out: list[Finding] = []
    cores = field_value(section, "num_cores")
    if cores is not None and not (is_int(cores) and 1 <= cores <= hardware.nsp_cores_per_soc):
        out.append(
            finding(
                ERROR,
                "qaic.num-cores",
                f"{key}: num_cores {cores!r} is not 1..{hardware.nsp_cores_per_soc}",
                option=OPT,
                fix=f"use at most {hardware.nsp_cores_per_soc} NSP cores per device",
            )
        )
    return out


def _check_values(key: str, section: Mapping[str, Any]) -> list[Finding]:
    """Booleans and MOS degrees."""
    out: list[Finding] = []
    for name in BOOLEAN_FIELDS:
        for spelling in spellings_present(section, name):
            if not isinstance(section[spelling], bool):
                out.append(
                    finding(
                        ERROR,
                        "qaic.bool-field",
                        f"{key}: {spelling} must be true or false, not {section[spelling]!r}",
                        option=OPT,
                        fix=f"write {spelling} as a JSON boolean",
                    )
                )
    for name in ("mos", "mdts_mos"):
        value = section.get(name)
        if value is not None and not (is_int(value) and (value == -1 or value >= 1)):
            out.append(
                finding(
                    ERROR,
                    "qaic.mos",
                    f"{key}: {name} {value!r} is not -1 or a positive integer",
                    option=OPT,
                    fix=f"use {name}: -1 (off) or a split degree such as 2",
                )
            )
    return out


def _check_field_names(key: str, section: Mapping[str, Any]) -> list[Finding]:
    """Fields better set through vLLM options, fields vLLM sets, and fields passed to the compiler as is."""
    out: list[Finding] = []
    if spellings_present(section, "mxfp6"):
        out.append(
            finding(
                NOTE,
                "qaic.prefer-quantization",
                f"{key}: prefer --quantization mxfp6 to the mxfp6 field",
                option=OPT,
                fix="drop the field and pass --quantization mxfp6",
            )
        )
    if spellings_present(section, "mxint8"):
        out.append(
            finding(
                NOTE,
                "qaic.prefer-kv-dtype",
                f"{key}: prefer --kv-cache-dtype mxint8 to the mxint8 field",
                option=OPT,
                fix="drop the field and pass --kv-cache-dtype mxint8",
            )
        )
    for name, flag in FROM_VLLM_ARGS.items():
        if name in section:
            out.append(
                finding(
                    WARNING,
                    "qaic.ignored-field",
                    f"{key}: {name} is ignored here; it comes from {flag}",
                    option=OPT,
                    fix=f"drop {name} and set {flag}",
                )
            )
    for name in section:
        if name not in DOCUMENTED_FIELDS and name not in FROM_VLLM_ARGS:
            out.append(
                finding(
                    NOTE,
                    "qaic.compiler-field",
                    f"{key}: {name} is passed to the compiler as is",
                    option=OPT,
                    fix="check the name against the QEfficient compile API",
                )
            )
    return out


def _check_devices(key: str, section: Mapping[str, Any], hardware: QaicHardware) -> list[Finding]:
    out: list[Finding] = []
    raw = field_value(section, "device_group")
    group = device_group(section)
    if raw is not None and (group is None or any(d < 0 for d in group)):
        return [
            finding(
                ERROR,
                "qaic.device-group",
                f"{key}: device_group {raw!r} is not a list of QIDs",
                option=OPT,
                fix="list device ids, e.g. [0, 1, 2, 3]",
            )
        ]
    if group is not None and len(set(group)) != len(group):
        out.append(
            finding(
                ERROR,
                "qaic.device-duplicate",
                f"{key}: device_group {group} repeats a QID",
                option=OPT,
                fix="list each device once",
            )
        )
    num = section.get("num_devices")
    if num is not None and not (is_int(num) and num >= 1):
        out.append(
            finding(
                ERROR,
                "qaic.num-devices",
                f"{key}: num_devices {num!r} is not a positive integer",
                option=OPT,
                fix="give a device count such as 4",
            )
        )
    elif num is not None and group is not None:
        if num != len(group):
            out.append(
                finding(
                    ERROR,
                    "qaic.devices-conflict",
                    f"{key}: num_devices {num} but device_group lists {len(group)} QIDs",
                    option=OPT,
                    fix="provide either num_devices or device_group",
                )
            )
        else:
            out.append(
                finding(
                    WARNING,
                    "qaic.devices-both",
                    f"{key}: num_devices and device_group both given",
                    option=OPT,
                    fix="provide either num_devices or device_group, not both",
                )
            )
    if group is not None and hardware.soc_count is not None:
        outside = [d for d in group if d >= hardware.soc_count]
        if outside:
            out.append(
                finding(
                    ERROR,
                    "qaic.device-range",
                    f"{key}: QIDs {outside} do not exist on {hardware.soc_count} SoCs",
                    option=OPT,
                    fix=f"use QIDs 0..{hardware.soc_count - 1}",
                )
            )
    return out


def _check_prefill_only(key: str, section: Mapping[str, Any]) -> list[Finding]:
    if "prefill_only" in section and not any(section["prefill_only"] is v for v in (True, False, None)):
        return [
            finding(
                ERROR,
                "qaic.prefill-only",
                f"{key}: prefill_only {section['prefill_only']!r} must be true "
                "(prefill QPC), false (decode QPC) or null (one QPC for both)",
                option=OPT,
                fix="write prefill_only as a JSON true, false or null",
            )
        ]
    return []


def _check_pooling(key: str, section: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    device = section.get("pooling_device")
    if device is not None and device not in POOLING_DEVICES:
        out.append(
            finding(
                ERROR,
                "qaic.pooling-device",
                f"{key}: pooling_device {device!r} is not qaic or cpu",
                option=OPT,
                fix='use "qaic" or "cpu"',
            )
        )
    for name in QAIC_ONLY_POOLING:
        if name in section and device != "qaic":
            out.append(
                finding(
                    ERROR,
                    "qaic.pooling-qaic-only",
                    f"{key}: {name} applies to qaic pooling only",
                    option=OPT,
                    fix='set pooling_device to "qaic" or drop ' + name,
                )
            )
    method = section.get("pooling_method")
    if method is not None and not isinstance(method, str):
        out.append(
            finding(
                ERROR,
                "qaic.pooling-method",
                f"{key}: pooling_method {method!r} is not a name",
                option=OPT,
                fix=f"use one of {', '.join(POOLING_METHODS)} or a custom method name",
            )
        )
    elif method is not None and method not in POOLING_METHODS:
        out.append(
            finding(
                NOTE,
                "qaic.pooling-custom",
                f"{key}: pooling_method {method!r} is a custom method",
                option=OPT,
                fix=f"built-in methods are {', '.join(POOLING_METHODS)}",
            )
        )
    return out


def _check_lengths(key: str, section: Mapping[str, Any], max_len: int | None) -> list[Finding]:
    out: list[Finding] = []
    for name in (*CCL_FIELDS, "embed_seq_len"):
        if name not in section:
            continue
        value = section[name]
        if not (isinstance(value, list) and value and all(is_int(v) and v > 0 for v in value)):
            out.append(
                finding(
                    ERROR,
                    "qaic.length-list",
                    f"{key}: {name} {value!r} is not a non-empty list of positive token counts",
                    option=OPT,
                    fix=f"write {name} as a list such as [1024, 2048]",
                )
            )
            continue
        if name in CCL_FIELDS and max_len is not None and any(v > max_len for v in value):
            out.append(
                finding(
                    ERROR,
                    "qaic.ccl-length",
                    f"{key}: {name} {value} exceeds --max-model-len {max_len}",
                    option=OPT,
                    fix=f"keep every length at or below {max_len}",
                )
            )
        if name == "embed_seq_len" and max_len is not None and max_len not in value:
            out.append(
                finding(
                    ERROR,
                    "qaic.embed-seq-len",
                    f"{key}: embed_seq_len {value} lacks --max-model-len {max_len}",
                    option=OPT,
                    fix=f"add {max_len} to embed_seq_len",
                )
            )
    if section.get("ccl_enabled") is True and any(n in section for n in CCL_FIELDS):
        out.append(
            finding(
                NOTE,
                "qaic.ccl-explicit",
                f"{key}: ccl_enabled only generates lists that are not given; "
                "the explicit comp_ctx_lengths lists are used",
                option=OPT,
            )
        )
    return out


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

"""A vLLM launch in its Qualcomm Cloud AI 100 form, and the QAIC rules over one.

``translate`` turns a vLLM launch into its QAIC form: ``--quantization mxfp6``,
``--kv-cache-dtype mxint8`` and an ``--additional-config`` holding ``override_qaic_config``
(device group from the TP size or explicit QIDs, NSP cores from the hardware profile),
``draft_override_qaic_config`` for a speculative draft, and VLM ``height`` / ``width``; plus the
QEfficient compile step (AOT mode). ``validate`` applies every QAIC rule to a launch.

Context options (``DialectContext.options``): ``mode`` ("aot" default, or "pyt"), ``devices`` /
``draft_devices`` (QIDs), ``num_cores`` / ``draft_num_cores``, ``override`` /
``draft_override`` (more override fields), ``height`` / ``width`` (VLM image sizes),
``multimodal`` (the model takes images), ``mxfp6`` / ``mxint8`` (default true), ``compile``
(emit the compile step, default true in AOT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from servekit.engines.common.findings import ERROR, Finding, finding
from servekit.engines.common.translation import (
    DialectContext,
    EngineLaunch,
    Untranslated,
    engine_image,
    split_cuda_env,
    unique_findings,
)
from servekit.engines.qaic.compile import compile_step
from servekit.engines.qaic.config import (
    ALIASES,
    DEFAULT_SHARED_DRAFT_CORES,
    DRAFT_KEY,
    DRAFTLESS_METHODS,
    TARGET_KEY,
    TOP_LEVEL_KEYS,
    VLM_KEYS,
    QaicHardware,
    device_count,
    device_group,
    field_value,
    is_qaic_profile,
    render_json,
)
from servekit.engines.qaic.rules import check_additional_config, check_launch
from servekit.engines.qaic.specs import ID
from servekit.engines.vllm.launch import Option, VllmLaunch, parse_vllm_argv

IMAGE_REPOSITORY = "ghcr.io/quic/cloud_ai_inference_vllm"  # the Cloud AI SDK's vLLM image
_REPLACED = ("--quantization", "--kv-cache-dtype", "--additional-config")
_AOT_INERT = {
    "--gpu-memory-utilization": "AOT mode sizes the KV cache from the compiled QPC",
    "--enforce-eager": "no effect in AOT mode",
    "--compilation-config": "AOT mode runs a QEfficient-compiled QPC; torch.compile settings do not apply",
}
_PYT_SET = ("--enforce-eager", "--async-scheduling", "--no-async-scheduling")


def validate_qaic(argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
    context = context or DialectContext()
    launch = parse_vllm_argv(argv)
    config = _additional_config(launch)
    out = _hardware_findings(context)
    out += check_launch(launch, config if isinstance(config, Mapping) else {}, _mode(context))
    out += check_additional_config(
        config, launch, QaicHardware.from_profile(context.hardware), multimodal=bool(context.options.get("multimodal"))
    )
    return unique_findings(out)


def translate_qaic(vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
    context = context or DialectContext()
    options = context.options
    launch = parse_vllm_argv(vllm_argv)
    mode = _mode(context)
    hardware = QaicHardware.from_profile(context.hardware)
    given = _additional_config(launch)
    findings: list[Finding] = []
    untranslated: list[Untranslated] = []
    if not isinstance(given, Mapping):
        findings += check_additional_config(given, launch, hardware)
        given = {}
    else:
        findings += [f for f in check_additional_config(given, launch, hardware) if f.code.startswith("qaic.alias")]
    for key, value in given.items():
        if key not in TOP_LEVEL_KEYS:
            untranslated.append(Untranslated(f"--additional-config.{key}", render_json(value), "not a QAIC setting"))

    config, tp_flag = build_additional_config(launch, given, context, hardware)
    kept, dropped = _carried_options(launch, mode, options)
    untranslated += dropped
    argv = (
        *_program(launch),
        *kept,
        *_qaic_options(tp_flag, mode, options),
        "--additional-config",
        render_json(config),
    )
    out_launch = parse_vllm_argv(argv)
    findings += _hardware_findings(context)
    findings += check_launch(out_launch, config, mode)
    findings += check_additional_config(config, out_launch, hardware, multimodal=bool(options.get("multimodal")))
    env, cuda_env = split_cuda_env(context.env, "a CUDA setting; QAIC does not read it")
    untranslated += cuda_env
    precompile = _compile_steps(out_launch, config, mode, options)
    image, image_findings = engine_image(context, IMAGE_REPOSITORY, prefix="qaic", tag=context.engine_version)
    findings += image_findings
    return EngineLaunch(
        engine=ID,
        argv=argv,
        env=env,
        image=image,
        precompile=precompile,
        untranslated=tuple(untranslated),
        findings=tuple(unique_findings(findings)),
    )


def _carried_options(launch: VllmLaunch, mode: str, options: Mapping[str, Any]) -> tuple[list[str], list]:
    """The vLLM options kept as they are, and the ones QAIC replaces or ignores (with reasons)."""
    kept: list[str] = []
    dropped: list[Untranslated] = []
    for opt in launch.options:
        if opt.flag in _REPLACED:
            dropped += _replaced(opt, options)
        elif mode == "aot" and opt.flag in _AOT_INERT:
            dropped.append(Untranslated(opt.flag, opt.value, _AOT_INERT[opt.flag]))
        elif not (mode == "pyt" and opt.flag in _PYT_SET):  # PYT's own settings are added by _qaic_options
            kept += [opt.flag, *opt.values]
    return kept, dropped


def _qaic_options(tp_flag: int | None, mode: str, options: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if tp_flag is not None:
        out += ["--tensor-parallel-size", str(tp_flag)]
    if options.get("mxfp6", True):
        out += ["--quantization", "mxfp6"]
    if options.get("mxint8", True):
        out += ["--kv-cache-dtype", "mxint8"]
    if mode == "pyt":
        out += ["--enforce-eager", "--no-async-scheduling"]
    return out


def build_additional_config(
    launch: VllmLaunch, given: Mapping[str, Any], context: DialectContext, hardware: QaicHardware
) -> tuple[dict[str, Any], int | None]:
    """The QAIC ``additional_config`` and, when the devices imply it, a TP size to add."""
    options = context.options
    target_given = dict(given.get(TARGET_KEY) or {})
    draft_given = dict(given.get(DRAFT_KEY) or {})
    tp = launch.get_int("--tensor-parallel-size")
    target_at = _placement(options.get("devices"), target_given) or {"device_group": list(range(tp or 1))}
    count = device_count(target_at) or 1
    tp_flag = count if tp is None and count > 1 and options.get("devices") is not None else None

    spec = launch.get_json("--speculative-config")
    needs_draft = isinstance(spec, dict) and (
        bool(spec.get("model")) or str(spec.get("method", "")).lower() not in DRAFTLESS_METHODS
    )
    config: dict[str, Any] = {}
    draft: dict[str, Any] | None = None
    shared_cores = 0
    if needs_draft or draft_given:
        draft_at = _placement(options.get("draft_devices"), draft_given) or dict(target_at)
        shared = _shares_devices(target_at, draft_at)
        draft_cores = (
            options.get("draft_num_cores")
            or field_value(draft_given, "num_cores")
            or (DEFAULT_SHARED_DRAFT_CORES if shared else hardware.nsp_cores_per_soc)
        )
        draft = _section(draft_at, draft_cores, draft_given, options.get("draft_override"))
        shared_cores = draft_cores if shared else 0
    cores = (
        options.get("num_cores")
        or field_value(target_given, "num_cores")
        or max(1, hardware.nsp_cores_per_soc - shared_cores)
    )
    config[TARGET_KEY] = _section(target_at, cores, target_given, options.get("override"))
    if draft is not None:
        config[DRAFT_KEY] = draft
    for key in VLM_KEYS:
        value = options.get(key, given.get(key))
        if value is not None:
            config[key] = list(value)
    return config, tp_flag


def _placement(explicit: Any, given: Mapping[str, Any]) -> dict[str, Any] | None:
    """Where a model runs: explicit QIDs, the given device_group, or auto-device mode (num_devices)."""
    ids = _ids(explicit) or device_group(given)
    if ids is not None:
        return {"device_group": ids}
    if given.get("num_devices") is not None:
        return {"num_devices": given["num_devices"]}
    return None


def _shares_devices(target_at: Mapping[str, Any], draft_at: Mapping[str, Any]) -> bool:
    target, draft = device_group(target_at), device_group(draft_at)
    if target is None or draft is None:
        return target_at == draft_at  # auto-device mode: same request, same devices
    return bool(set(target) & set(draft))


def _section(placement: Mapping[str, Any], cores: Any, given: Mapping[str, Any], extra: Any) -> dict[str, Any]:
    """Placement and ``num_cores`` first, then the other fields as given (aliases folded)."""
    section: dict[str, Any] = {**placement, "num_cores": cores}
    folded = set(ALIASES["device_group"]) | set(ALIASES["num_cores"]) | {"num_devices"}
    for key, value in {**given, **(extra or {})}.items():
        if key not in folded:
            section[key] = value
    return section


def _compile_steps(launch: VllmLaunch, config: Mapping[str, Any], mode: str, options: Mapping[str, Any]) -> tuple:
    if mode != "aot" or not options.get("compile", True) or launch.model is None:
        return ()
    dims = {k: config[k] for k in VLM_KEYS if k in config}
    steps = [compile_step(launch.model, config[TARGET_KEY], launch, role="target", vlm_dims=dims)]
    spec = launch.get_json("--speculative-config")
    if DRAFT_KEY in config and isinstance(spec, dict) and spec.get("model"):
        steps.append(compile_step(str(spec["model"]), config[DRAFT_KEY], launch, role="draft"))
    return tuple(steps)


def _replaced(opt: Option, options: Mapping[str, Any]) -> list[Untranslated]:
    value = (opt.value or "").lower()
    if opt.flag == "--quantization" and value != "mxfp6":
        return [
            Untranslated(
                opt.flag,
                opt.value,
                "QAIC compiles MXFP6 weights from the unquantized checkpoint (--quantization mxfp6)",
            )
        ]
    if opt.flag == "--kv-cache-dtype" and value not in ("mxint8", "auto"):
        return [Untranslated(opt.flag, opt.value, "QAIC compresses the KV cache as MXINT8 (--kv-cache-dtype mxint8)")]
    if opt.flag == "--quantization" and not options.get("mxfp6", True):
        return [Untranslated(opt.flag, opt.value, "MXFP6 turned off for this launch")]
    return []


def _hardware_findings(context: DialectContext) -> list[Finding]:
    if context.hardware is not None and not is_qaic_profile(context.hardware):
        return [
            finding(
                ERROR,
                "qaic.hardware",
                f"hardware {context.hardware_id or ''!s} is not a Cloud AI 100 profile",
                fix="pass --hardware ai100_standard or ai100_ultra (servekit list hardware), or another --engine",
            )
        ]
    return []


def _additional_config(launch: VllmLaunch) -> Any:
    return launch.get_json("--additional-config") or {}


def _mode(context: DialectContext) -> str:
    return str(context.options.get("mode", "aot")).lower()


def _ids(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) for v in value):
        return list(value)
    return None


def _program(launch: VllmLaunch) -> tuple[str, ...]:
    if launch.program and launch.program[:2] != ("vllm", "serve"):
        return (*launch.program, "--model", launch.model) if launch.model else launch.program
    return ("vllm", "serve", launch.model) if launch.model else ("vllm", "serve")

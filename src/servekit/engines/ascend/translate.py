"""A vLLM launch in its Huawei Ascend form (the vLLM Ascend plugin), and the Ascend rules.

The launch is vLLM's own; what changes is around it: the brand image
(``quay.io/ascend/vllm-ascend:<tag>``), NPU environment (allocator, HCCL buffer, OpenMP
binding, device visibility), and rules: ``--quantization ascend`` selects ModelSlim
checkpoints and exists only on Ascend; vLLM Ascend spells the in-checkpoint MTP head of the
Qwen3.5 family ``qwen3_5_mtp``.

Context options (``DialectContext.options``): ``image_tag`` (image tag; default
``v<engine_version>``), ``model_hub`` ("modelscope" sets ``VLLM_USE_MODELSCOPE``),
``recommended_env`` (default true: add the NPU env below where the launch does not set it),
``modelslim`` (the checkpoint is a ModelSlim quantization: it needs ``--quantization ascend``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.common.translation import (
    DialectContext,
    EngineLaunch,
    Untranslated,
    engine_image,
    split_cuda_env,
    unique_findings,
)
from servekit.engines.ascend.specs import ID
from servekit.engines.vllm.launch import VllmLaunch, parse_vllm_argv
from servekit.hardware import profile_of

IMAGE_REPOSITORY = "quay.io/ascend/vllm-ascend"
OMNI_IMAGE_REPOSITORY = "quay.io/ascend/vllm-omni"
"""vLLM-Omni's Ascend images, built on a vLLM Ascend image (its docker/Dockerfile.npu), so they run
vLLM Ascend too (``servekit.synthesis.images`` has their facts)."""
# NPU settings vLLM Ascend deployments use: expandable allocator segments, a 512 MB HCCL
# buffer, and no OpenMP thread pinning fights with the CPU binding of the workers.
RECOMMENDED_ENV = {
    "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
    "HCCL_BUFFSIZE": "512",
    "OMP_PROC_BIND": "false",
    "OMP_NUM_THREADS": "1",
}
RENAMED_ENV = {"CUDA_VISIBLE_DEVICES": "ASCEND_RT_VISIBLE_DEVICES"}
# vLLM quantization methods whose kernels exist only for CUDA / ROCm.
CUDA_ONLY_QUANTIZATION = frozenset(
    {
        "modelopt",
        "modelopt_fp4",
        "nvfp4",
        "mxfp4",
        "marlin",
        "gptq_marlin",
        "awq_marlin",
        "bitsandbytes",
        "fp_quant",
        "petit_nvfp4",
    }
)
ASCEND_MTP = "qwen3_5_mtp"


def is_ascend_profile(profile: Mapping[str, Any] | None, hardware_id: str | None = None) -> bool:
    """The profile's platform is Ascend; with no profile, the hardware id names an Ascend device."""
    if not profile:
        return (hardware_id or "").startswith("ascend")
    return profile_of(profile, hardware_id).platform == "ascend"


def ascend_quantization_findings(launch: VllmLaunch, context: DialectContext) -> list[Finding]:
    """``--quantization ascend`` only on Ascend; ModelSlim checkpoints need it there."""
    quant = (launch.get("--quantization") or "").lower()
    known = context.hardware is not None or context.hardware_id is not None
    on_ascend = is_ascend_profile(context.hardware, context.hardware_id)
    out: list[Finding] = []
    if quant == "ascend" and known and not on_ascend:
        out.append(
            finding(
                ERROR,
                "ascend.quantization-hardware",
                "--quantization ascend (ModelSlim) runs only on "
                f"Ascend NPUs, not on {context.hardware_id or 'this hardware'}",
                option="--quantization",
                fix="pass --hardware with an Ascend profile (servekit list hardware), or --variant with a checkpoint quantized for this hardware",
            )
        )
    if on_ascend and context.options.get("modelslim") and quant != "ascend":
        out.append(
            finding(
                ERROR,
                "ascend.modelslim",
                "a ModelSlim checkpoint without --quantization ascend loads as float weights",
                option="--quantization",
                fix="add --quantization ascend",
            )
        )
    if on_ascend and quant in CUDA_ONLY_QUANTIZATION:
        out.append(
            finding(
                ERROR,
                "ascend.cuda-quantization",
                f"--quantization {quant} needs CUDA kernels that vLLM Ascend does not have",
                option="--quantization",
                fix="use a ModelSlim checkpoint with --quantization ascend, or a BF16/FP8 checkpoint",
            )
        )
    return out


def speculative_findings(launch: VllmLaunch) -> list[Finding]:
    spec = launch.get_json("--speculative-config")
    if isinstance(spec, dict) and str(spec.get("method", "")).lower() == "mtp":
        return [
            finding(
                NOTE,
                "ascend.mtp-spelling",
                f"vLLM Ascend documents the Qwen3.5-family MTP head as '{ASCEND_MTP}'",
                option="--speculative-config",
                fix=f'use "method":"{ASCEND_MTP}" for Qwen3.5-family checkpoints',
            )
        ]
    return []


def image_for(context: DialectContext) -> tuple[str, list[Finding]]:
    """The image: the given one when it is an Ascend image of vLLM Ascend or of vLLM-Omni (built on
    vLLM Ascend), else the brand image."""
    tag = f"v{context.engine_version}" if context.engine_version else None
    return engine_image(context, IMAGE_REPOSITORY, prefix="ascend", tag=tag, also=(OMNI_IMAGE_REPOSITORY,))


def ascend_env(context: DialectContext, launch: VllmLaunch) -> tuple[dict[str, str], list[Untranslated], list[Finding]]:
    renamed = {RENAMED_ENV.get(name, name): value for name, value in context.env.items()}
    env, untranslated = split_cuda_env(renamed, "a CUDA/NCCL setting; Ascend uses CANN and HCCL")
    findings: list[Finding] = []
    if context.options.get("recommended_env", True):
        added = [k for k in RECOMMENDED_ENV if k not in env]
        env.update({k: RECOMMENDED_ENV[k] for k in added})
        if added:
            findings.append(
                finding(
                    NOTE,
                    "ascend.env",
                    "added NPU settings: " + ", ".join(added),
                    fix="set recommended_env false to leave them out",
                )
            )
    if str(context.options.get("model_hub", "")).lower() == "modelscope":
        env.setdefault("VLLM_USE_MODELSCOPE", "True")
    elif (launch.get("--quantization") or "").lower() == "ascend" and "VLLM_USE_MODELSCOPE" not in env:
        findings.append(
            finding(
                NOTE,
                "ascend.modelscope",
                "ModelSlim checkpoints are often published on ModelScope",
                fix="set VLLM_USE_MODELSCOPE=True when the weights come from ModelScope, or pass a local path",
            )
        )
    return env, untranslated, findings


def validate_ascend(argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
    context = context or DialectContext()
    launch = parse_vllm_argv(argv)
    out = ascend_quantization_findings(launch, context) + speculative_findings(launch)
    if context.hardware is not None and not is_ascend_profile(context.hardware, context.hardware_id):
        out.append(
            finding(
                ERROR,
                "ascend.hardware",
                f"hardware {context.hardware_id or ''} is not an Ascend NPU",
                fix="pass --hardware with an Ascend profile (servekit list hardware), or another --engine",
            )
        )
    if "CUDA_VISIBLE_DEVICES" in context.env:
        out.append(
            finding(
                WARNING,
                "ascend.visible-devices",
                "CUDA_VISIBLE_DEVICES does not select NPUs",
                fix="use ASCEND_RT_VISIBLE_DEVICES",
            )
        )
    replaced = image_for(context)[1] if context.image else []
    if any(f.code == "ascend.image" for f in replaced):  # the given image does not run vLLM Ascend
        out += replaced
    return unique_findings(out)


def translate_ascend(vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
    context = context or DialectContext()
    launch = parse_vllm_argv(vllm_argv)
    image, image_findings = image_for(context)
    env, untranslated, env_findings = ascend_env(context, launch)
    checked = DialectContext(
        hardware=context.hardware,
        hardware_id=context.hardware_id,
        env=env,
        image=image,
        engine_version=context.engine_version,
        options=context.options,
    )
    findings = validate_ascend(vllm_argv, checked) + image_findings + env_findings
    return EngineLaunch(
        engine=ID,
        argv=tuple(vllm_argv),
        env=env,
        image=image,
        untranslated=tuple(untranslated),
        findings=tuple(unique_findings(findings)),
    )

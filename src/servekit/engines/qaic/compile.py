"""The QEfficient ahead-of-time compile step that matches a QAIC launch.

``override_qaic_config`` fields become keyword arguments of QEfficient's ``compile`` (aliases
resolved to QEfficient's names, the device group to a device count); the vLLM options that fix
the compiled shapes (context length, decode batch, prefill length, MXFP6 / MXINT8) join them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from servekit.engines.common.translation import PrecompileStep
from servekit.engines.qaic.config import COMPILE_NAMES, VLM_KEYS, canonical, device_group
from servekit.engines.vllm.launch import VllmLaunch

# Settings the runtime reads; they are not compiler inputs.
RUNTIME_ONLY = frozenset(
    {
        "pooling_device",
        "pooling_method",
        "normalize",
        "softmax",
        "qpc_path",
        "ctx_len",
        "batch_size",
        "full_batch_size",
        "num_speculative_tokens",
    }
)
TEXT_CLASS = "QEFFAutoModelForCausalLM"
VLM_CLASS = "QEFFAutoModelForImageTextToText"

SCRIPT = """\
import json, sys
import QEfficient
model_class = getattr(QEfficient, sys.argv[1])
load_kwargs, compile_kwargs = json.loads(sys.argv[3]), json.loads(sys.argv[4])
model = model_class.from_pretrained(sys.argv[2], **load_kwargs)
print(model.compile(**compile_kwargs))
"""


def compile_kwargs(section: Mapping[str, Any], launch: VllmLaunch, *, extra: Mapping[str, Any] | None = None) -> dict:
    """QEfficient ``compile`` keyword arguments for one model (target or draft)."""
    kwargs: dict[str, Any] = {}
    prefill = launch.get_int("--long-prefill-token-threshold")
    if prefill is not None:
        kwargs["prefill_seq_len"] = prefill
    ctx_len = launch.get_length("--max-model-len")
    if ctx_len is not None:
        kwargs["ctx_len"] = ctx_len
    batch = launch.get_int("--max-num-seqs")
    if batch is not None:
        kwargs["full_batch_size"] = batch
    kwargs["mxfp6_matmul"] = launch.get("--quantization") == "mxfp6"
    kwargs["mxint8_kv_cache"] = launch.get("--kv-cache-dtype") == "mxint8"
    for spelling, value in {**section, **(extra or {})}.items():
        name = canonical(spelling)
        if name in RUNTIME_ONLY:
            continue
        if name == "device_group":
            group = device_group(section)
            if group is not None:
                kwargs["num_devices"] = len(group)
        else:
            kwargs[COMPILE_NAMES.get(name, spelling)] = value
    return kwargs


def compile_step(
    model: str,
    section: Mapping[str, Any],
    launch: VllmLaunch,
    *,
    role: str = "target",
    vlm_dims: Mapping[str, Any] | None = None,
    python: str = "python",
) -> PrecompileStep:
    """A ``python -c`` step that loads ``model`` with QEfficient and compiles its QPC."""
    dims = {k: v for k, v in (vlm_dims or {}).items() if k in VLM_KEYS}
    kwargs = compile_kwargs(section, launch, extra=dims)
    multimodal = bool(dims) or any(k in section for k in VLM_KEYS)
    model_class = VLM_CLASS if multimodal else TEXT_CLASS
    load_kwargs: dict[str, Any] = {"continuous_batching": True}
    if multimodal:
        load_kwargs = {"kv_offload": bool(section.get("kv_offload", True))}
        kwargs.pop("kv_offload", None)
    argv = (
        python,
        "-c",
        SCRIPT,
        model_class,
        model,
        json.dumps(load_kwargs, separators=(",", ":")),
        json.dumps(kwargs, separators=(",", ":")),
    )
    return PrecompileStep(
        name=f"qaic-compile-{role}",
        description=f"compile the {role} model {model} into a QPC with QEfficient ({model_class})",
        argv=argv,
        script=SCRIPT,
        kwargs=kwargs,
    )

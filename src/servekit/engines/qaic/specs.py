"""vLLM on Qualcomm Cloud AI 100 as data: its id, its compile step, its memory model."""

from __future__ import annotations

from servekit.engines.common.specs import (
    BUDGET_WHOLE_DEVICE,
    NO_ACCELERATOR,
    STEPS,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.user_install import UserInstall, UserInstallStep

ID = "vllm-qaic"
ALIASES = ("qaic",)
KV_DTYPE = "mxint8"  # what --kv-cache-dtype auto compiles to

PRECOMPILE = PrecompileSpec(
    kind=STEPS,
    name="compile",
    planned="would run the QEfficient compile step",
    missing_reason="QEfficient is not installed on this machine",
    module="QEfficient",
    accelerator=NO_ACCELERATOR,
    timeout_s=7200.0,
)
# KV lives in the compiled program (ctx_len x batch); the device budget is all of it.
MEMORY = MemoryHooks(
    rule=MemoryRule(budget=BUDGET_WHOLE_DEVICE, counts_cuda_graphs=False, concurrency_in_tokens=True),
    default_kv_dtype=KV_DTYPE,
)

_VENV = "uv venv\nsource .venv/bin/activate\n"
# How a person installs it where it serves (a plan shows these steps).
USER_INSTALL = UserInstall("latest", (
    UserInstallStep("prerequisite", "# install the Cloud AI 100 Platform and Apps SDKs from Qualcomm first "
                                    "(https://quic.github.io/cloud-ai-sdk-pages/)",
                    "the SDKs provide the qaic runtime and the compiler the QPC is built with"),
    UserInstallStep("pip", _VENV + 'uv pip install "git+https://github.com/quic/efficient-transformers"',
                    "QEfficient compiles the model into a QPC; vLLM's qaic build ships in the SDK image"),
    UserInstallStep("docker", "docker pull ghcr.io/quic/cloud_ai_inference_vllm:{version}"),
))

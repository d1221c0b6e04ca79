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
from servekit.synthesis.install_families import QAIC

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

# How a person installs it where it serves: the Cloud AI 100 install family's steps (one home).
USER_INSTALL = UserInstall("latest", (
    UserInstallStep("prerequisite", QAIC.prerequisite or "", QAIC.prerequisite_note, QAIC.source),
    UserInstallStep("pip", QAIC.pip.latest if QAIC.pip else "", QAIC.pip.note if QAIC.pip else None, QAIC.source),
    UserInstallStep("docker", "docker pull ghcr.io/quic/cloud_ai_inference_vllm:{version}", None, QAIC.source),
))

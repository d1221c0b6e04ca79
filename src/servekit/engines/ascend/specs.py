"""vLLM on Huawei Ascend NPUs as data: its id, pre-compile step and memory model."""

from __future__ import annotations

from servekit.engines.common.specs import (
    BUDGET_UTILIZATION,
    NOTHING,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.user_install import UserInstall, UserInstallStep
from servekit.synthesis.install_families import ASCEND

ID = "vllm-ascend"
ALIASES = ("ascend",)

PRECOMPILE = PrecompileSpec(
    kind=NOTHING,
    name="precompile",
    planned="nothing to pre-compile here",
    missing_reason=f"{ID} compiles at its first start on the deployment host",
)
MEMORY = MemoryHooks(rule=MemoryRule(budget=BUDGET_UTILIZATION, concurrency_in_tokens=True))

# How a person installs it where it serves: the Ascend install family's steps (one home).
USER_INSTALL = UserInstall(ASCEND.version_pinned or "0.23.0", (
    UserInstallStep("prerequisite", ASCEND.prerequisite or "", ASCEND.prerequisite_note, ASCEND.source),
    UserInstallStep("pip", ASCEND.pip.pinned if ASCEND.pip else "", ASCEND.pip.note if ASCEND.pip else None,
                    ASCEND.source),
    UserInstallStep("docker", "docker pull quay.io/ascend/vllm-ascend:v{version}", None, ASCEND.source),
))

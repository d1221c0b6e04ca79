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

ID = "vllm-ascend"
ALIASES = ("ascend",)

PRECOMPILE = PrecompileSpec(
    kind=NOTHING,
    name="precompile",
    planned="nothing to pre-compile here",
    missing_reason=f"{ID} compiles at its first start on the deployment host",
)
MEMORY = MemoryHooks(rule=MemoryRule(budget=BUDGET_UTILIZATION, concurrency_in_tokens=True))

_VENV = "uv venv\nsource .venv/bin/activate\n"
# How a person installs it where it serves (a plan shows these steps).
USER_INSTALL = UserInstall("0.23.0", (
    UserInstallStep("prerequisite", "# install the CANN toolkit and kernels for your NPU first "
                                    "(https://vllm-ascend.readthedocs.io/en/latest/installation.html)",
                    "vllm-ascend {version} needs the CANN release its documentation names"),
    UserInstallStep("pip", _VENV + 'uv pip install "vllm=={version}" "vllm-ascend=={version}"',
                    "vLLM and the Ascend plugin at the same version"),
    UserInstallStep("docker", "docker pull quay.io/ascend/vllm-ascend:v{version}"),
))

"""SGLang as data: its id, stored catalogs, image, launch, memory model and what a plan installs.

SGLang 0.5.23 pins torch 2.14.1 and CUDA packages, and its CPU kernels are built from source, so
no local environment is installed here (``install = None``): its parser alone runs in the minimal
environment scripts/install_parser_envs.sh builds, for extraction and the agreement tests.
"""

from __future__ import annotations

from pathlib import Path

from servekit.engines.common.flags import CatalogStore
from servekit.engines.common.specs import (
    BUDGET_UTILIZATION,
    NOTHING,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.user_install import UserInstall, UserInstallStep

ID = "sglang"
DEFAULT_VERSION = "0.5.23"
MODULE = "sglang.launch_server"
CATALOGS = CatalogStore(Path(__file__).resolve().parent / "data", ID, "scripts/extract_sglang_flags.py")

# Docker Hub lmsysorg/sglang tags stable releases as v<version>; since v0.5.20 the images ship
# CUDA 13 only (v0.5.19-cu129 was the last CUDA 12 tag): sgl-project/sglang,
# docs/docs/get-started/install.mdx.
IMAGE_REPOSITORY = "lmsysorg/sglang"


def image_tag(version: str) -> str:
    return f"v{version}"


ROUTER_MODULE = "sglang_router.launch_router"  # the prefill/decode router (pip: sglang-router)

PRECOMPILE = PrecompileSpec(
    kind=NOTHING,
    name="none",
    planned="nothing to compile ahead: SGLang captures its CUDA graphs when it starts",
    missing_reason="SGLang compiles nothing ahead of time; it captures CUDA graphs at its first start on the "
    "deployment host",
)

LAUNCH = LaunchSpec(
    program=("python", "-m", MODULE),
    module_program=("-m", MODULE),
    model_option="--model-path",
    readiness_path="/health",
    log_facts={"kv_cache_tokens": r"max_total_num_tokens=(\d+)"},
)

# --mem-fraction-static is (weights + KV pool) / device memory; activations and CUDA graph buffers
# live outside it. Left unset, sglang.srt.arg_groups.memory_hook.handle_gpu_memory_settings sets
# it to (gpu_mem - reserved) / gpu_mem (see memory.default_mem_fraction_static); on GPUs over
# 60 GiB the reserve is at least 10 GiB (at most 0.875 on 80 GiB, 0.929 on 141 GiB; less with
# larger chunked prefill and graph reserves).
MEMORY = MemoryHooks(
    rule=MemoryRule(budget=BUDGET_UTILIZATION, block_size=1, counts_cuda_graphs=False, default_utilization=0.88),
)

USER_INSTALL = UserInstall(DEFAULT_VERSION, (
    UserInstallStep("pip", 'uv venv\nsource .venv/bin/activate\nuv pip install "sglang=={version}"',
                    "SGLang {version} with its CUDA kernels (Linux with an NVIDIA GPU)"),
    UserInstallStep("docker", f"docker pull {IMAGE_REPOSITORY}:v{{version}}"),
))

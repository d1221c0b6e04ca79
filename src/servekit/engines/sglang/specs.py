"""SGLang as data: its id, stored catalogs, image, launch, memory model and what a plan installs.

SGLang 0.5.23 pins torch 2.14.1 and CUDA packages, and its CPU kernels are built from source, so
no local environment is installed here (``install = None``): its parser alone runs in the minimal
environment scripts/install_parser_envs.sh builds, for extraction and the agreement tests.
"""

from __future__ import annotations

from pathlib import Path

from servekit.engines.common.flags import CatalogStore
from servekit.engines.common.specs import (
    BUDGET_STATIC_FRACTION,
    NOTHING,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.user_install import UserInstall, UserInstallStep
from servekit.engines.sglang.memory import default_mem_fraction_static
from servekit.synthesis.images import ImageFacts

ID = "sglang"
DEFAULT_VERSION = "0.5.23"
MODULE = "sglang.launch_server"
CATALOGS = CatalogStore(Path(__file__).resolve().parent / "data", ID, "scripts/extract_sglang_flags.py")

# Docker Hub lmsysorg/sglang tags stable releases as v<version>; since v0.5.20 the images ship
# CUDA 13 only (v0.5.19-cu129 was the last CUDA 12 tag): sgl-project/sglang,
# docs/docs/get-started/install.mdx. The ROCm images of a release are tagged
# v<version>-rocm700-mi30x (MI300X/MI325X, gfx942) and v<version>-rocm700-mi35x (MI350X/MI355X,
# gfx950), built from docker/rocm.Dockerfile (docs/platforms/amd_gpu.md and the SGLang cookbook).
IMAGE_REPOSITORY = "lmsysorg/sglang"
INSTALL_SOURCE = "https://docs.sglang.io/get_started/install.html"
AMD_SOURCE = "https://docs.sglang.io/platforms/amd_gpu.html"
ROCM_IMAGE_SUFFIX = "rocm700"
ROCM_GPU_FAMILIES = {"hip:gfx942": "mi30x", "hip:gfx950": "mi35x"}
"""The GPU family an SGLang ROCm image is built for, by compute target."""
IMAGES = (ImageFacts((IMAGE_REPOSITORY,), (), (), True, ("cuda", "rocm"),
                     f"{INSTALL_SOURCE} and {AMD_SOURCE} (the image has no serve entrypoint: it is run with "
                     "`python3 -m sglang.launch_server ...` as its command)"),)


def image_tag(version: str, platform: str | None = None, compute_target: str | None = None) -> str:
    """The release's image tag: the CUDA build, or on ROCm the build for the GPU family."""
    if platform == "rocm":
        return f"v{version}-{ROCM_IMAGE_SUFFIX}-{ROCM_GPU_FAMILIES.get(compute_target or '', 'mi30x')}"
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
    default_port=30000,  # sglang/srt/server_args.py: ServerArgs.port = 30000
    log_facts={"kv_cache_tokens": r"max_total_num_tokens=(\d+)"},
)

# --mem-fraction-static is (weights + KV pool) / device memory; activations and CUDA graph buffers
# live outside it. Left unset, each release picks it from the GPU's memory and the launch
# (memory.default_mem_fraction_static: about 0.83 on an 80 GB H100 and 0.90 on an H200 at TP 1
# from 0.5.3).
MEMORY = MemoryHooks(
    rule=MemoryRule(budget=BUDGET_STATIC_FRACTION, block_size=1, counts_cuda_graphs=False, default_utilization=0.88,
                    static_fraction=default_mem_fraction_static),
)

USER_INSTALL = UserInstall(DEFAULT_VERSION, (
    UserInstallStep("pip", 'uv venv\nsource .venv/bin/activate\nuv pip install "sglang=={version}"',
                    "SGLang {version} with its CUDA kernels (Linux with an NVIDIA GPU)", INSTALL_SOURCE),
    UserInstallStep("docker", f"docker pull {IMAGE_REPOSITORY}:v{{version}}", None, INSTALL_SOURCE),
), by_family=(("rocm", (
    UserInstallStep("pip", "# SGLang publishes no ROCm wheel: run its ROCm image (the docker pull below), or build "
                           f"sgl-kernel and sglang[all_hip] from source ({AMD_SOURCE})",
                    "SGLang {version} on AMD GPUs: the ROCm image of the release", AMD_SOURCE),
    UserInstallStep("docker", f"docker pull {IMAGE_REPOSITORY}:v{{version}}-{ROCM_IMAGE_SUFFIX}-mi30x", None, AMD_SOURCE),
)),))

"""Modular MAX as data: its id, stored catalogs, local install, warm-cache step, launch, memory model."""

from __future__ import annotations

from pathlib import Path

from servekit.engines.common.flags import CatalogStore
from servekit.engines.common.install import InstallRecipe
from servekit.engines.common.specs import (
    BUDGET_FREE_FRACTION,
    COMPILES_FOR_TARGET,
    PHASE_COMPILE,
    PHASE_DOWNLOAD,
    PHASE_KV_CACHE,
    PHASE_READY,
    PHASE_WEIGHTS,
    STEPS,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.user_install import UserInstall, UserInstallStep

ID = "max"
ALIASES: tuple[str, ...] = ()
PROGRAM = "max"
DEFAULT_VERSION = "26.7.0"
CATALOGS = CatalogStore(Path(__file__).resolve().parent / "data", ID, "scripts/extract_max_flags.py")

# Modular MAX with its serving extras; it needs no torch.
INSTALL = InstallRecipe(
    dist="max",
    default_version=DEFAULT_VERSION,
    import_name="max",
    steps=(("max[serve]=={version}",),),
    key_packages=("transformers", "click"),
)

PRECOMPILE = PrecompileSpec(
    kind=STEPS,
    name="warm-cache",
    planned="would run max warm-cache with the translated flags",
    missing_reason=f"no local MAX environment (servekit engine install {INSTALL.dist})",
    environment=INSTALL.dist,
    accelerator=COMPILES_FOR_TARGET,
    cpu_options={"devices": "cpu"},
    timeout_s=3600.0,
)

LAUNCH = LaunchSpec(
    program=(PROGRAM, "serve"),
    readiness_path="/health",
    log_phases={
        PHASE_DOWNLOAD: r"Downloading|Fetching \d+ files",
        PHASE_WEIGHTS: r"Building model graph took|[Ll]oaded (?:model )?weights",
        PHASE_COMPILE: r"Building, compiling, and initializing model|Still compiling model|Compiling model took",
        PHASE_KV_CACHE: r"KV manager: \d+ huge pages|Using legacy KV cache",
        PHASE_READY: r"Server ready on",
    },
    log_facts={
        "compile_seconds": r"Compiling model took ([\d.]+) seconds",
        "load_seconds": r"Worker process startup took ([\d.]+)s",
        "max_batch_size": r"max_batch_size: (\d+)",
        "metrics_port": r"metrics server on port (\d+)",
    },
    # max/pipelines/kv_cache/paged_kv_cache/jenga_cache_manager.py logs the pool it allocates:
    # "Jenga KV manager: 5 huge pages x 256.00 KiB = 1.25 MiB (per device), page_size 128 tokens"
    log_products={"kv_cache_tokens": r"KV manager: (\d+) huge pages .*page_size (\d+) tokens"},
    metrics_port=8001,  # max/serve/config.py Settings.metrics_port
    metrics_port_env="MAX_SERVE_METRICS_ENDPOINT_PORT",
)

PAGE_SIZE = 128  # MAX's default --kv-cache-page-size
# On a host device MAX plans a batch of one (MemoryEstimator._infer_optimal_batch_size in
# max/pipelines/lib/memory_estimation.py: "batching on CPU is generally not useful") unless
# --max-batch-size is given, and sizes the pool for that batch: ceil(max_seq_len / page_size)
# pages per request plus the null page (compute_num_device_blocks in max/nn/kv_cache/cache_params.py,
# via kv_cache_memory_size in max/pipelines/kv_cache/registry.py), at most what
# device_memory_utilization of the free memory leaves after the weights.
CPU_RULE = MemoryRule(
    budget=BUDGET_FREE_FRACTION, block_size=PAGE_SIZE, counts_cuda_graphs=False, concurrency_in_tokens=True,
    pool_requests=1, null_pages=1,
)
MEMORY = MemoryHooks(
    rule=MemoryRule(
        budget=BUDGET_FREE_FRACTION, block_size=PAGE_SIZE, counts_cuda_graphs=False, concurrency_in_tokens=True
    ),
    cpu_rule=CPU_RULE,
)

_VENV = "uv venv\nsource .venv/bin/activate\n"
# How a person installs it where it serves (a plan shows these steps).
INSTALL_SOURCE = "https://docs.modular.com/max/packages"
CONTAINER_SOURCE = "https://docs.modular.com/max/container"
USER_INSTALL = UserInstall(DEFAULT_VERSION, (
    UserInstallStep("pip", _VENV + 'uv pip install "modular=={version}"',
                    "Modular MAX {version} with its serving extras; it brings its own kernels, no vLLM", INSTALL_SOURCE),
    UserInstallStep("docker", "docker pull docker.modular.com/modular/max-nvidia-full:{version}", None,
                    CONTAINER_SOURCE),
), by_family=(("rocm", (
    UserInstallStep("pip", _VENV + 'uv pip install "modular=={version}"',
                    "Modular MAX {version}; its AMD GPU kernels ship in the same package", INSTALL_SOURCE),
    UserInstallStep("docker", "docker pull docker.modular.com/modular/max-amd:{version}", None, CONTAINER_SOURCE),
)),))

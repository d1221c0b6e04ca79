"""The table of vLLM release rules: each rule that changed how a release accounts memory or reports
its pool, with the release that changed it and where that is read from (an engine code path, a
named public measurement). ``servekit.fit.versions`` selects from it by a launch's version.
"""

from __future__ import annotations

from servekit.records import record


@record
class VersionRule:
    """A default that changed in an engine release: its value from ``since`` on, and the source."""

    id: str
    since: tuple[int, ...]
    value: str
    what: str
    source: str


RULES: tuple[VersionRule, ...] = (
    VersionRule(
        "v1_default", (0, 0), "none",
        "the V0 engine runs unless VLLM_USE_V1=1 (V1 is an opt-in preview)",
        "vllm/envs.py VLLM_USE_V1 (0.7.x)",
    ),
    VersionRule(
        "v1_default", (0, 8), "cuda",
        "V1 runs by default on CUDA; other platforms fall back to V0 ('Non-CUDA is supported on V1, but off "
        "by default for now'); VLLM_USE_V1=0 selects V0",
        "vllm/engine/arg_utils.py EngineArgs._is_v1_supported_oracle (0.8.x)",
    ),
    VersionRule(
        "v1_default", (0, 9, 2), "cuda+rocm",
        "ROCm joins the platforms that run V1 by default",
        "vllm-project/vllm#19440 '[ROCm][V1] Adding ROCm to the list of plaforms using V1 by default' "
        "(merged 2025-06-10)",
    ),
    VersionRule(
        "v1_default", (0, 11), "only",
        "V0 is gone: VLLM_USE_V1 no longer selects an engine",
        "vLLM 0.11.0 removed the V0 engine code paths (vllm/worker/, vllm/engine/llm_engine.py)",
    ),
    VersionRule(
        "profile_tokens", (0, 0), "max_model_len",
        "the default engine (V0) profiles one forward pass over max_num_batched_tokens, which is "
        "max(max_model_len, 2048) unless chunked prefill is on (servekit.fit.scheduler)",
        "vllm/config.py SchedulerConfig.__post_init__; vllm/worker/model_runner.py profile_run (V0); the V0 "
        "peak_torch_memory of Llama-3.1-8B grows with --max-model-len (17.06 -> 17.98 GiB from 20k to 29k tokens)",
    ),
    VersionRule(
        "profile_tokens", (0, 8), "batched",
        "the default engine (V1) profiles max_num_batched_tokens tokens, then a dummy sampler pass over "
        "max_num_seqs rows of logits",
        "vllm/v1/worker/gpu_model_runner.py profile_run -> _dummy_run(max_num_tokens), _dummy_sampler_run; "
        "vllm-project/vllm#13594",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 0), "h100_names_1024",
        "V1 scheduler defaults: 8192 batched tokens on devices named H100/H200, else 2048; 1024 "
        "sequences everywhere",
        "vllm-project/vllm#12369 (device-name check in EngineArgs._set_default_args_v1); V1's "
        "max_num_seqs default of 1024, reverted for most hardware by vllm-project/vllm#16158",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 8, 4), "h100_names",
        "1024 sequences only on H100/H200; 256 elsewhere",
        "vllm-project/vllm#16158 '[V1] Revert the default max_num_seqs to V0 values for most hardware' "
        "(merged 2025-04-07)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 8, 5), "memory_70",
        "8192 tokens and 1024 sequences on any device of at least 70 GiB (A100 80GB included)",
        "vllm-project/vllm#17073 '[Minor] Use larger batch sizes for A100/B100/B200/MI300x' (merged 2025-04-23)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 9), "memory_70_not_a100",
        "the 70 GiB tier leaves out devices named A100",
        "vllm-project/vllm#17885 '[Perf] Use small max_num_batched_tokens for A100' (merged 2025-05-09)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 28), "memory_70_160",
        "devices of at least 160 GiB (B200/B300, MI300X/MI325X) default to 16384 batched tokens",
        "vllm/engine/arg_utils.py EngineArgs.get_batch_defaults at tag v0.28.0 ('for GPUs like B200/B300 "
        "with >= 160GB memory, use the largest defaults'); absent at v0.27.0",
    ),
    VersionRule(
        "sampler", (0, 0), "sampler_bytes_per_logit_flashinfer",
        "on CUDA the dummy sampler takes FlashInfer's top-k/top-p path (no sort) unless "
        "VLLM_USE_FLASHINFER_SAMPLER=0; other platforms sort",
        "vllm/v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__ (v0.11.0: "
        "'envs.VLLM_USE_FLASHINFER_SAMPLER is not False' selects forward_cuda)",
    ),
    VersionRule(
        "sampler", (0, 11, 1), "sampler_bytes_per_logit_sort",
        "FlashInfer's sampler becomes opt-in (VLLM_USE_FLASHINFER_SAMPLER=1): the dummy sampler sorts the "
        "logits (apply_top_k_top_p, unchanged since 0.8.5)",
        "vllm/v1/sample/ops/topk_topp_sampler.py at v0.11.1 ('Users must opt in explicitly via "
        "VLLM_USE_FLASHINFER_SAMPLER=1'); Mistral-Small-3.2 on H100 at 0.11.0 logs a 2.12 GiB peak, "
        "launches of late-2025 images 4.76-5.64 GiB (llm-d empirical-vllm-memory-results)",
    ),
    VersionRule(
        "sampler", (0, 17), "sampler_bytes_per_logit_triton",
        "batches of at least 8 rows take the Triton top-k/top-p kernel instead of the sort",
        "vllm/v1/sample/ops/topk_topp_sampler.py at v0.17.0 apply_top_k_top_p ('if HAS_TRITON and "
        "logits.shape[0] >= 8: apply_top_k_top_p_triton'); Qwen3-14B activation 5.64 -> 2.23 GiB from "
        "0.16 to 0.17 (llm-d-planner sweep-versions)",
    ),
    VersionRule(
        "non_torch", (0, 0), "non_torch_gib",
        "non-torch memory of one rank: the memory snapshot precedes the distributed setup",
        "vllm/v1/worker/gpu_worker.py init_device before v0.11.0 (MemorySnapshot before "
        "init_worker_distributed_environment)",
    ),
    VersionRule(
        "non_torch", (0, 11), "non_torch_gib_after_setup",
        "the snapshot follows the distributed setup ('Initialize the distributed environment BEFORE "
        "taking memory snapshot'): less of the runtime counts",
        "vllm/v1/worker/gpu_worker.py init_device at v0.11.0",
    ),
    VersionRule(
        "non_torch", (0, 18), "non_torch_gib",
        "non-torch memory of a single rank rises again: the CUDA-graph memory profile captures graphs "
        "inside the memory profile, and what the captures hold outside torch's allocator counts as "
        "non-torch (launches that capture no graph keep the 0.11 figure: the cudagraph_profile rule)",
        "vllm/v1/worker/gpu_worker.py determine_available_memory at v0.18.0 (profile_cudagraph_memory() "
        "called inside 'with memory_profiling(...)', unless enforce_eager or ROCm; unchanged at v0.24.0, "
        "there 'cudagraph_mode != CUDAGraphMode.NONE' on CUDA); size from llm-d-planner sweep-versions "
        "(Qwen3-14B on H100: 0.13 GiB at 0.15-0.17, 0.25 GiB at 0.18; servekit.fit.calibration_data)",
    ),
    VersionRule(
        "cudagraph_profile", (0, 0), "none",
        "no CUDA graph is captured while the memory profile runs (graphs are captured after the KV "
        "cache is allocated)",
        "vllm/v1/worker/gpu_worker.py determine_available_memory before v0.18.0 (profile_run() alone "
        "inside memory_profiling)",
    ),
    VersionRule(
        "cudagraph_profile", (0, 18), "in_memory_profile",
        "profile_cudagraph_memory captures sample graphs inside the memory profile, on CUDA, when the "
        "launch captures graphs at all (not with --enforce-eager)",
        "vllm/v1/worker/gpu_worker.py determine_available_memory at v0.18.0: 'if not "
        "self.model_config.enforce_eager and not current_platform.is_rocm(): cudagraph_memory_estimate = "
        "self.model_runner.profile_cudagraph_memory()' inside 'with memory_profiling(...)'",
    ),
    VersionRule(
        "tp_comm", (0, 0), "setup_counted",
        "tensor-parallel ranks count their NCCL and custom all-reduce setup",
        "snapshot before the distributed setup (see non_torch); V0 0.7.1 at TP8 on A100-SXM4 logs 2.10 GiB",
    ),
    VersionRule(
        "tp_comm", (0, 11), "setup_excluded",
        "the setup precedes the snapshot: only what the collectives allocate while profiling counts",
        "vllm/v1/worker/gpu_worker.py init_device at v0.11.0; H100 TP2 launches of late-2025 images log "
        "0.54-0.55 GiB non-torch (llm-d empirical-vllm-memory-results), a 4x A30 TP4 launch of "
        "0.11.1.dev12 0.09 GiB (vllm-project/vllm issue 'OPT-2.7B OOM while OPT-6.7B works fine')",
    ),
    VersionRule(
        "tp_comm", (0, 17), "setup_counted",
        "the collective stack changes (torch 2.10 with its NCCL, FlashInfer all-reduce fusion on by default "
        "for TP > 1 on Hopper and Blackwell); tensor-parallel ranks log about 2 GiB of non-torch memory again",
        "requirements/cuda.txt torch==2.10.0 and vllm/config/vllm.py enable_allreduce_rms_fusion at v0.17.0; "
        "llm-d-planner accuracy report v0.19.0: TP2 2.06-2.07, TP4 2.13-2.21 GiB on H100-80GB-HBM3",
    ),
    VersionRule(
        "moe_workspace", (0, 0), "transient",
        "the fused-MoE intermediate caches are allocated per call and freed with the layer's output",
        "vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl (torch.empty per call)",
    ),
    VersionRule(
        "moe_workspace", (0, 14), "persistent",
        "the Triton MoE kernel runs through the modular kernel, whose workspace (M x top_k x (max(N/2, K) + "
        "max(N, K))) stays allocated after the forward pass, so the dummy sampler runs beside it",
        "vllm/model_executor/layers/fused_moe/unquantized_fused_moe_method.py at v0.14.0 "
        "(FusedMoEModularKernel(..., TritonExperts)); modular_kernel.py _allocate_buffers -> "
        "current_workspace_manager().get_simultaneous; TritonExperts.workspace_shapes",
    ),
    VersionRule(
        "moe_chunk", (0, 0), "32768",
        "fused MoE runs the experts over chunks of at most VLLM_FUSED_MOE_CHUNK_SIZE tokens (default 32768) "
        "and sizes its intermediate caches for one chunk: M = min(num_tokens, CHUNK_SIZE)",
        "vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl and vllm/envs.py "
        "VLLM_FUSED_MOE_CHUNK_SIZE default '32768', read in the v0.7.3, v0.8.5, v0.9.2, v0.10.2 and v0.11.0 wheels",
    ),
    VersionRule(
        "moe_chunk", (0, 12), "16384",
        "the default chunk becomes 16 x 1024 tokens (fused_experts_impl; from 0.14 the modular kernel's "
        "_chunk_info, unless VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING=0)",
        "vllm/envs.py at v0.12.0 VLLM_FUSED_MOE_CHUNK_SIZE default str(16 * 1024) (v0.11.0: '32768'); "
        "fused_moe.py fused_experts_impl at v0.12.0/v0.13.0; modular_kernel.py FusedMoEModularKernel._chunk_info "
        "at v0.14.0 and v0.17.0",
    ),
    VersionRule(
        "moe_chunk", (0, 18), "none",
        "the modular kernel no longer chunks: its workspace is sized for the whole pass",
        "vllm/model_executor/layers/fused_moe/modular_kernel.py at v0.18.0 (_allocate_buffers(..., M_full, "
        "M_full, ...), no _chunk_info) and vllm/envs.py without VLLM_FUSED_MOE_CHUNK_SIZE (v0.18.0, v0.19.0, "
        "v0.20.0, v0.24.0, v0.28.0, v0.32.0; v0.17.0 still chunks)",
    ),
    VersionRule(
        "accounting", (0, 0), "profile_increase",
        "non-KV memory = weights loaded + the profile's torch peak increase + the non-torch increase; "
        "buffers the model runner allocated before the profile are not counted",
        "vllm/utils/mem_utils.py memory_profiling (v0.26.0: non_kv_cache_memory = non_torch_increase + "
        "torch_peak_increase + weights_memory)",
    ),
    VersionRule(
        "accounting", (0, 27), "consumed",
        "non-KV memory = all device memory consumed since the start-up snapshot (mem_get_info) + the "
        "transient peak: the runner's and the drafter's persistent buffers count",
        "vllm/utils/mem_utils.py memory_profiling at v0.27.0 (total_consumed = before_create.free_memory - "
        "after_profile.free_memory; transient_peak_headroom); GPUModelRunner.__init__ inputs_embeds "
        "(max_num_tokens x hidden), llm_base_proposer hidden_states and inputs_embeds",
    ),
    VersionRule(
        "async_scheduling", (0, 0), "off",
        "the engine schedules a step after the one before has finished (--async-scheduling opts in)",
        "vllm/config/scheduler.py SchedulerConfig.async_scheduling: bool = False (0.11.0 to 0.13.0)",
    ),
    VersionRule(
        "async_scheduling", (0, 14), "on",
        "the scheduler runs a step ahead of the device, so a step's host work overlaps the device's work, "
        "unless pipeline parallelism, a draft method other than EAGLE or MTP, or an executor other than mp, "
        "uni or external_launcher (Ray) rules it out; the CPU platform turns it off",
        "vllm/config/scheduler.py at v0.14.0: async_scheduling Field(default=None); vllm/config/vllm.py "
        "'Enable async scheduling unless there is an incompatible option'; vllm/platforms/cpu.py at 0.32.0: "
        "'async scheduling is not required on CPU'",
    ),
    VersionRule(
        "default_utilization", (0, 0), "0.9",
        "without --gpu-memory-utilization the engine budgets 0.9 of the device's memory",
        "vllm/config/cache.py CacheConfig.gpu_memory_utilization default 0.9; the --gpu-memory-utilization "
        "default of every stored flag catalog from 0.6.6.post1 to 0.19.1 (src/servekit/engines/vllm/data)",
    ),
    VersionRule(
        "default_utilization", (0, 20), "0.92",
        "without --gpu-memory-utilization the engine budgets 0.92 of the device's memory (GPU, TPU and "
        "CPU workers read the same CacheConfig field)",
        "the --gpu-memory-utilization default of the stored flag catalogs from 0.20.0 to 0.31.0 and of the "
        "0.33.0 parser (vllm/config/cache.py: 'gpu_memory_utilization: float = Field(default=0.92, ...)'); "
        "tpu-inference logs 'total_hbm_limit_cap_gb' at 0.92 of the limit with no utilization argument "
        "(keras-team/keras-io guides/keras_hub/serving_with_vllm, vLLM 0.26.0)",
    ),
    VersionRule(
        "cudagraphs_in_budget", (0, 0), "no",
        "CUDA graphs are captured after the KV cache is sized, outside the budget", "vllm/v1/worker/gpu_worker.py",
    ),
    VersionRule(
        "cudagraphs_in_budget", (0, 20), "yes",
        "the CUDA-graph memory estimate comes out of the KV budget "
        "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1; on CUDA only until 0.26)",
        "vllm/envs.py at v0.20.0: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default '1' (v0.19.1: '0'); "
        "vllm/v1/worker/gpu_worker.py determine_available_memory (its log line says 'default since "
        "v0.21.0', the code of the v0.20.0 release already defaults to it)",
    ),
    VersionRule(
        "cudagraphs_on_rocm", (0, 0), "no",
        "ROCm launches take no CUDA-graph estimate out of the budget ('Skip on ROCm/HIP/XPU as graph pool "
        "handles and mem_get_info behave differently')",
        "vllm/v1/worker/gpu_worker.py determine_available_memory at v0.24.0-v0.25.1: current_platform.is_cuda()",
    ),
    VersionRule(
        "cudagraphs_on_rocm", (0, 26), "yes",
        "ROCm launches profile the CUDA-graph estimate too",
        "vllm/v1/worker/gpu_worker.py determine_available_memory at v0.26.0: current_platform.is_cuda_alike()",
    ),
    VersionRule(
        "hybrid_allocator", (0, 0), "no",
        "every attention layer keeps a full-length KV cache: sliding-window layers are pooled as full "
        "attention (one KV cache group)",
        "vllm/v1/core/kv_cache_utils.py before the hybrid allocator ('Hybrid KV cache manager is disabled "
        "... There can be some waste of KV cache memory')",
    ),
    VersionRule(
        "hybrid_allocator", (0, 9, 1), "yes",
        "sliding-window and full-attention layers form separate KV cache groups sharing one block pool",
        "vllm-project/vllm#17996 '[v1] Hybrid Memory Allocator' (merged June 2025; first in 0.9.1)",
    ),
    VersionRule(
        "hybrid_prefix_caching", (0, 0), "opt-in",
        "models with linear-attention or Mamba layers beside attention serve without prefix caching "
        "unless --enable-prefix-caching (one state block per linear layer group and request instead of "
        "two in 'align' mode)",
        "vllm/engine/arg_utils.py _set_default_chunked_prefill_and_prefix_caching_args before "
        "vllm-project/vllm#50991: default_prefix_caching = is_prefix_caching_supported and not is_hybrid",
    ),
    VersionRule(
        "hybrid_prefix_caching", (0, 28), "default",
        "hybrid models get prefix caching by default, in 'align' mamba cache mode (main-branch development "
        "builds before 0.28 may carry it already, but a build reads as PEP 440 orders it: before the "
        "release it names)",
        "vllm-project/vllm#50991 '[Mamba] enable prefix cache by default' (merged 2026-08-04); "
        "vllm/model_executor/models/config.py MambaModelConfig at v0.32.0",
    ),
    VersionRule(
        "pool_report", (0, 0), "blocks",
        "'GPU KV cache size' is num_blocks // num_groups x block_size (under-reports hybrid models)",
        "vllm/v1/core/kv_cache_utils.py _report_kv_cache_config up to v0.20.0",
    ),
    VersionRule(
        "pool_report", (0, 20, 1), "concurrency",
        "'GPU KV cache size' is max_concurrency x max_model_len",
        "vllm/v1/core/kv_cache_utils.py _report_kv_cache_config at v0.20.1 ('num_tokens = "
        "int(max_concurrency * max_model_len)'); get_max_concurrency_for_kv_cache_config",
    ),
)

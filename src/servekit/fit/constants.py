"""Every number the memory model uses, in one table: its value, what it stands for, and where
the value comes from (an engine code path, a named public measurement, or a stated assumption).

Code paths name files of vLLM 0.32.0 (``vllm/...``), except those of the V0 engine, which name
the files of the releases that still carried it (0.7-0.10: ``vllm/worker/``,
``vllm/model_executor/layers/sampler.py``). Measurements name the public start-up logs
the value is read from; none is fitted to a single launch. The launches each measured (or
checked) constant was fitted on, with the per-launch values and the rule that fits them, are
``servekit.fit.calibration_data``; ``bench/bench_kv_points.py`` scores the points outside them
apart and refits each constant without each of its points, and ``--sensitivity`` shows how
much each one moves the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from servekit.records import record

CODE = "engine code path"
MEASURED = "public measurement"
ASSUMED = "stated assumption"


@record
class Constant:
    """A number a prediction uses, with what it stands for and its source."""

    id: str
    value: float
    stands_for: str
    kind: str
    """CODE | MEASURED | ASSUMED"""
    source: str


CONSTANTS: tuple[Constant, ...] = (
    Constant(
        "large_device_gib", 70.0,
        "device memory from which the V1 OpenAI server defaults to 8192 batched tokens and 1024 "
        "sequences (from 0.8.5; A100s excepted from 0.9; servekit.fit.scheduler)", CODE,
        "vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: "
        "device_memory >= 70 GiB and 'a100' not in device_name",
    ),
    Constant(
        "huge_device_gib", 160.0,
        "device memory from which the V1 OpenAI server defaults to 16384 batched tokens (from 0.28)", CODE,
        "vllm/engine/arg_utils.py: device_memory >= 160 GiB (B200/B300 class)",
    ),
    Constant(
        "forward_bytes_per_token_unit", 3.0,
        "live activation elements per token per unit of (intermediate/TP + hidden) at the forward "
        "peak: gate_up output (2 x intermediate) plus the activated half, and three hidden-size "
        "tensors (residual, normed input, layer output)", CODE,
        "vllm/model_executor/layers/activation.py SiluAndMul (gate_up -> act); checked against the V0 "
        "peak_torch_memory of Llama-3.1-8B on RTX 3090 at 20k and 29k tokens (2.07 / 2.99 GiB, 0.6.x logs)",
    ),
    Constant(
        "layer_hidden_rows", 3.0,
        "hidden-size tensors per token live beside a fused-MoE layer's expert buffers: the residual, "
        "the normed input and the layer output", CODE,
        "vllm/model_executor/models/deepseek_v2.py / qwen3_moe.py decoder layer forward (residual kept "
        "across the layer); vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl "
        "(cache13 = M x top_k x max(N, K), intermediate_cache2 = M x top_k x N/2); checked against the "
        "V0 activation peak of DeepSeek-Coder-V2-Lite at TP8 over 8192 tokens on A100-40GB (0.36 GiB, "
        "vLLM 0.7.1 log in a public SageMaker LMI walkthrough, deploy-deepseek-coder-v2 README)",
    ),
    Constant(
        "intermediate_per_hidden", 3.5,
        "MLP intermediate size per hidden size when a config does not state it", ASSUMED,
        "Llama-3 and Qwen2.5 dense models: 14336/4096 = 3.5, 18944/3584 = 5.3, 17408/5120 = 3.4",
    ),
    Constant(
        "default_hidden", 4096.0, "hidden size when a config does not state it", ASSUMED,
        "the most common hidden size of 7B-9B dense models",
    ),
    Constant(
        "default_vocab", 152_000.0, "vocabulary size when a config does not state it", ASSUMED,
        "Qwen2/Qwen3 (151936/152064) and Llama-3 (128256) vocabularies; the larger is the safer plan",
    ),
    Constant(
        "sampler_bytes_per_logit_flashinfer", 8.0,
        "bytes per (sequence x vocab) logit of the dummy sampler pass with the FlashInfer top-k/top-p "
        "sampler: fp32 logits and fp32 probabilities, no sort", CODE,
        "vllm/v1/sample/ops/topk_topp_sampler.py flashinfer path; consistent with Qwen2-7B on A100 at "
        "0.10.1.1 (0.50-0.53 GiB besides weights and KV at 256 sequences)",
    ),
    Constant(
        "sampler_bytes_per_logit_sort", 38.9,
        "bytes per (sequence x vocab) logit of V1's dummy sampler pass on the sort-based top-k/top-p path "
        "(apply_top_k_top_p: the bf16 logits, their fp32 copy, sorted values and int64 indices, the "
        "masks, softmax and cumsum, the scattered result, then the probabilities and the exponential "
        "noise of random_sample, as the caching allocator peaks)", MEASURED,
        "vllm/v1/sample/ops/topk_topp_sampler.py forward_native (the same code from 0.8.5 to 0.16); "
        "logged activation peaks on H100 with 1024 sequences divided by 1024 x vocab: Llama-3.1-8B 4.76, "
        "Qwen3-0.6B 5.56, Qwen3-32B 5.64, gpt-oss-20b and gpt-oss-120b 7.38 GiB (late-2025 images, llm-d "
        "empirical-vllm-memory-results), Qwen3-14B 5.64 GiB at 0.15 and 0.16 (llm-d-planner "
        "sweep-versions): 38.4-38.9 B, median 38.92, to one decimal 38.9 (servekit.fit.calibration_data)",
    ),
    Constant(
        "sampler_bytes_per_logit_triton", 15.3,
        "bytes per logit of the dummy sampler pass on the Triton top-k/top-p kernel (batches of at least "
        "8 rows from 0.17): fp32 logits, probabilities and noise, and the bf16 logits", MEASURED,
        "vllm/v1/sample/ops/topk_topp_triton.py (v0.17.0); logged activation peaks of dense text models "
        "on H100 at 0.17-0.19 with 1024 sequences over 1024 x vocab (llm-d-planner accuracy report "
        "v0.19.0 and sweep-versions): Qwen2.5-7B 2.21, Qwen3-8B 2.21, Qwen3-14B 2.23, Llama-3.1-8B "
        "1.89, phi-4 1.52, gemma-7b 3.63, gemma-2-9b 3.65, granite-3.1-2b 0.75 GiB: 14.9-16.0 B, "
        "median 15.32, to one decimal 15.3 (servekit.fit.calibration_data)",
    ),
    Constant(
        "sampler_bytes_per_logit_v0", 40.0,
        "bytes per (sequence x vocab) logit of V0's dummy sampler pass (top_k = vocab - 1, top_p = "
        "0.99): bf16 logits 2, their fp32 copy 4, sorted values 4 and int64 indices 8, the top-k and "
        "top-p masks 2, softmax and cumsum 8, the inverse index 8 and the gathered logits 4", CODE,
        "vllm/model_executor/layers/sampler.py _apply_top_k_top_p (logits_idx_inv scatter + gather; "
        "V0 takes no FlashInfer path unless VLLM_USE_FLASHINFER_SAMPLER=1); vllm-project/vllm#10511 "
        "sanity logs: Meta-Llama-3-8B on H100, TP1 and TP2 alike, 1.26 GiB activation peak = 41.2 B per "
        "256 x 128,256 logit (the sampler, not the forward pass, sets the peak)",
    ),
    Constant(
        "rejection_sampler_bytes_per_logit", 24.0,
        "bytes per (sequence x vocab) logit of the dummy rejection-sampler pass with speculative "
        "decoding: fresh logits for 2 rows per sequence in bf16 (4), the fp32 target logits and their "
        "clone (4 + 4), and one sort-based top-k/top-p pass (fp32 values 4 + int64 indices 8)", CODE,
        "vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run (if self.speculative_config: "
        "logits = torch.randn(num_tokens + num_reqs, vocab)); vllm/v1/sample/rejection_sampler.py "
        "forward (raw_target_logits.to(torch.float32), target_logits.clone(), apply_sampling_constraints)",
    ),
    Constant(
        "drafter_hidden_rows", 1.0,
        "hidden-size rows per profiled token kept live while the drafter's dummy pass runs, besides "
        "the drafter layer's own activations: the target model's output hidden states (the drafter's "
        "own hidden-states buffer is allocated before the profile: drafter_buffer_rows)", CODE,
        "vllm/v1/worker/gpu_model_runner.py _dummy_run (hidden_states held across "
        "self.drafter.dummy_run(num_tokens)); vllm/v1/spec_decode/llm_base_proposer.py __init__ "
        "(self.hidden_states = torch.zeros(max_num_tokens, hidden_size), built with the model runner)",
    ),
    Constant(
        "marlin_scale_bytes", 2.0,
        "bytes of one Marlin group scale: an FP8 linear served weight-only on a GPU without FP8 keeps one "
        "scale in the model dtype per block_k input rows and output column (servekit.fit.marlin)", CODE,
        "vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin "
        "(scales.to(layer.orig_dtype), repeat_interleave(block_n) to (size_k / block_k, size_n)); a dual RTX "
        "3090 27B FP8 launch logs 14.68 GiB loaded per rank for 14.38 GiB of checkpoint (noonghunna/club-3090 "
        "issues #602, #751)",
    ),
    Constant(
        "runner_buffer_rows", 1.0,
        "hidden-size rows per schedulable token of the model runner's persistent inputs_embeds buffer", CODE,
        "vllm/v1/worker/gpu_model_runner.py GPUModelRunner.__init__ (v0.27.0): self.inputs_embeds = "
        "_make_buffer(max_num_tokens, inputs_embeds_size, dtype)",
    ),
    Constant(
        "drafter_buffer_rows", 2.0,
        "hidden-size rows per schedulable token of a draft network's persistent buffers", CODE,
        "vllm/v1/spec_decode/llm_base_proposer.py __init__ (v0.27.0): hidden_states and inputs_embeds, "
        "each (max_num_tokens, hidden_size)",
    ),
    Constant(
        "fp8_block_scale_bytes", 4.0,
        "bytes of one block scale of a block-scaled FP8 checkpoint, which the Marlin layout replaces", CODE,
        "weight_scale_inv tensors are float32 in block-scaled FP8 checkpoints "
        "(vllm/model_executor/layers/quantization/fp8.py create_weights, BlockQuantScaleParameter)",
    ),
    Constant(
        "non_torch_gib", 0.25,
        "memory outside PyTorch's allocator on one rank: CUDA context, cuBLAS/cuDNN workspaces, where the "
        "release counts the set-up around the start-up snapshot (before 0.11 and from 0.18)", MEASURED,
        "logged non-torch memory of 11 single-GPU H100 launches at 0.18-0.19: 0.24-0.27 GiB, median 0.25 "
        "(llm-d-planner accuracy logs v0.19.0 and version sweep; servekit.fit.calibration_data); Qwen2-7B "
        "on A100 at 0.10.1.1 fits 0.25 within 0.05 GiB",
    ),
    Constant(
        "non_torch_gib_after_setup", 0.13,
        "non-torch memory of one rank from 0.11 to 0.17, whose snapshot follows the distributed set-up",
        MEASURED,
        "Qwen3-14B on H100 at 0.15, 0.16 and 0.17: 0.13 GiB (llm-d-planner sweep-versions); Llama-3.1-8B, "
        "Qwen3-0.6B, Qwen3-32B 0.13-0.14 GiB (late-2025 images) and Mistral-Small-3.2 0.14 GiB at 0.11.0 "
        "(llm-d empirical-vllm-memory-results): median 0.13",
    ),
    Constant(
        "non_torch_gib_rocm", 0.6,
        "non-torch memory of one ROCm rank (HIP context, hipBLASLt and RCCL workspaces)", MEASURED,
        "V0 logs on ROCm: MI300X 0.66 GiB (rocm/vllm 0.9.2.dev364 image, cmontemuino/amd-mi300x-ml-benchmarks), "
        "24 GiB Radeon 0.53 and 0.62 GiB (0.6.6 and a fork), MI50 0.46 GiB (0.8.5 fork): median 0.575, to one "
        "decimal 0.6; V1 MI300X launches "
        "(Qwen-14B TP2 at 0.9.2.dev364 and 0.11.1rc2 in AMD's Ray-on-ROCm blog, Llama-3.1-8B at 0.21.1rc1 in "
        "NCHC disaggregation notes) land within 0.1 GiB of their logged KV memory with it",
    ),
    Constant(
        "comm_pcie_gib", 0.25,
        "extra non-torch memory per rank for NCCL ring buffers when TP > 1 without NVSwitch, where the "
        "release counts the collectives' set-up (before 0.11 and from 0.17)", ASSUMED,
        "NCCL default NCCL_BUFFSIZE 4 MiB x channels x peers; PCIe nodes keep few channels; consistent with "
        "a 2x RTX 3090 TP2 launch at 0.24.0 (noonghunna/club-3090 #594: logged KV 5.33 GiB, planned 5.32)",
    ),
    Constant(
        "comm_pcie_gib_after_setup", 0.0,
        "extra non-torch memory per rank when TP > 1 without NVSwitch from 0.11 to 0.16", MEASURED,
        "4x A30 (NVLink pairs over PCIe) at TP4 under 0.11.1.dev12: 0.09 GiB non-torch in all, below the "
        "single-rank figure (vllm-project/vllm issue 'OPT-2.7B OOM while OPT-6.7B works fine', Nov 2025)",
    ),
    Constant(
        "comm_nvswitch_gib", 1.9,
        "extra non-torch memory per rank when TP > 1 over NVLink/NVSwitch (A100 SXM and later) or xGMI: "
        "NCCL/RCCL channel buffers and vLLM's custom all-reduce / symmetric-memory buffers, where the "
        "release counts them (before 0.11 and from 0.17; for xGMI an assumption: no MI300X log states its "
        "non-torch memory)", MEASURED,
        "logged non-torch memory of multi-GPU H100 launches at 0.19 (TP2 2.07-2.10, TP4 2.17-2.21 GiB; "
        "llm-d-planner accuracy logs v0.19.0) and 2.10 GiB at TP8 on A100-SXM4 NVSwitch nodes under vLLM "
        "0.7.1 V0 (SageMaker LMI DeepSeek-Coder-V2 walkthrough log on ml.p4d.24xlarge), each less the "
        "single-GPU 0.25 GiB: 1.82-1.96, median 1.85, to one decimal 1.9 (servekit.fit.calibration_data)",
    ),
    Constant(
        "comm_nvswitch_gib_after_setup", 0.42,
        "extra non-torch memory per rank when TP > 1 over NVLink/NVSwitch from 0.11 to 0.16: what the "
        "collectives allocate while profiling, their set-up being outside the snapshot", MEASURED,
        "H100 TP2 launches of late-2025 images: Llama-3.3-70B-FP8 0.55 GiB and Qwen3-32B 0.54 GiB "
        "non-torch, less the single-GPU 0.13 GiB (llm-d empirical-vllm-memory-results): median 0.415, to two "
        "decimals 0.42",
    ),
    Constant(
        "cudagraph_gib_per_layer_graph", 0.5 / 1024,
        "CUDA-graph memory vLLM estimates per decoder layer per captured batch size (the first capture "
        "of each mode plus one per-graph increment per further size)", MEASURED,
        "vllm/v1/worker/gpu_model_runner.py profile_cudagraph_memory; the 'Estimated CUDA graph memory' "
        "lines of 23 successful H100 launches of the llm-d-planner v0.19.0 accuracy logs (51 sizes up "
        "to 512, PIECEWISE and FULL; gpt-oss-20b 83 sizes) over layers x sizes: 0.34-0.80 MiB, median "
        "0.50, to one decimal 0.5 (servekit.fit.calibration_data); the graph-capture memory the same "
        "launches log afterwards is 0.021-0.031 GiB per layer",
    ),
    Constant(
        "cudagraph_max_capture", 512.0, "largest batch size captured in a CUDA graph by default", CODE,
        "vllm/config/compilation.py max_cudagraph_capture_size default min(max_num_seqs x 2, 512)",
    ),
    Constant(
        "vision_max_item_tokens", 16384.0,
        "output tokens of the largest dummy image of a vision tower that takes any image size (no "
        "image_size in its vision_config): the processor's pixel budget over (patch x merge)^2", ASSUMED,
        "the budget lives in preprocessor_config.json, which config.json facts do not carry; Qwen2-VL / "
        "Qwen2.5-VL max_pixels 12,845,056 / 28^2 and Qwen3-VL longest_edge 16,777,216 / 32^2 are both "
        "16,384 tokens (vllm/model_executor/models/qwen2_vl.py get_image_size_with_most_features); public "
        "start-up logs of Qwen3.6/3.8-27B launches (noonghunna/club-3090 issues #602, #1047, #1107) print "
        "'Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items'",
    ),
    Constant(
        "encoder_hidden_rows", 3.0,
        "width-sized rows per patch live at the vision tower's peak besides its MLP: the position "
        "embeddings, the residual stream and the block's normed input", CODE,
        "vllm/model_executor/models/qwen3_vl.py Qwen3_VisionTransformer.forward (pos_embeds held in "
        "encoder_metadata) and Qwen3_VisionBlock.forward (x + self.mlp(self.norm2(x)))",
    ),
    Constant(
        "encoder_intermediate_rows", 2.0,
        "intermediate-sized rows per patch (split over TP) live at the vision MLP's peak: fc1's output "
        "and its activation (a gated MLP's fused gate-up output makes it one more)", CODE,
        "vllm/model_executor/models/qwen3_vl.py Qwen3_VisionMLP.forward "
        "(linear_fc2(act_fn(linear_fc1(x))), column/row-parallel linears); qwen2_5_vl.py "
        "Qwen2_5_VisionMLP.forward (act_fn(gate_up_proj(x)))",
    ),
    Constant(
        "default_vision_width", 1152.0,
        "width of the vision tower assumed for a multimodal model whose facts carry no vision_config",
        ASSUMED, "the SigLIP-so400m geometry of the Qwen3-VL / Qwen3.5 towers and Gemma 3's SigLIP",
    ),
    Constant(
        "default_vision_intermediate", 4304.0, "MLP width of the assumed vision tower", ASSUMED,
        "the SigLIP-so400m geometry (Qwen3-VL / Qwen3.5 vision_config intermediate_size)",
    ),
    Constant(
        "default_vision_depth", 27.0, "blocks of the assumed vision tower (its weights only)", ASSUMED,
        "the SigLIP-so400m geometry (Qwen3-VL / Qwen3.5 vision_config depth)",
    ),
    Constant(
        "default_vision_patch", 16.0, "patch side in pixels of the assumed vision tower", ASSUMED,
        "Qwen3-VL / Qwen3.5 vision_config patch_size",
    ),
    Constant(
        "default_vision_temporal_patch", 2.0, "frames per patch of the assumed vision tower", ASSUMED,
        "Qwen-VL vision_config temporal_patch_size (an image is repeated over both frames)",
    ),
    Constant(
        "default_vision_merge", 2.0, "patches merged into one token per side by the assumed tower", ASSUMED,
        "Qwen-VL vision_config spatial_merge_size",
    ),
)

_BY_ID = {c.id: c for c in CONSTANTS}
_OVERRIDES: ContextVar[dict[str, float]] = ContextVar("fit_constant_overrides", default={})


def value(constant_id: str) -> float:
    """The value of one constant (or its override inside ``overridden``)."""
    return _OVERRIDES.get().get(constant_id, _BY_ID[constant_id].value)


@contextmanager
def overridden(values: dict[str, float]) -> Iterator[None]:
    """Use other values for some constants inside the block (sensitivity runs)."""
    unknown = set(values) - set(_BY_ID)
    if unknown:
        raise KeyError(f"unknown fit constant(s): {', '.join(sorted(unknown))}")
    token = _OVERRIDES.set({**_OVERRIDES.get(), **values})
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def constant(constant_id: str) -> Constant:
    return _BY_ID[constant_id]

"""The launches each fitted number of the memory model was fitted on (``servekit.fit.calibration``).

Visible points are lines of ``kv-points-visible.jsonl`` (the shared reference set); other entries
name the public log: the llm-d-planner accuracy logs (llm-d-incubation/llm-d-planner, commit
d3121e0, ``accuracy/results/v0.19.0/logs/``), its vLLM version sweep (commit a95e9f6,
``accuracy/results/version-sweep/runs/``), the llm-d ``empirical-vllm-memory-results`` page (all
H100 80GB), and the issue threads and repositories named in the constants' sources. A per-launch
value is computed here from the figures the log prints, so the arithmetic is part of the record.
"""

from __future__ import annotations

from servekit.fit.calibration import BOUNDARY, CHECKED, MEDIAN, VISIBLE, Calibration, Observation
from servekit.fit.constants import value

GIB = 1 << 30
SEQUENCES = 1024
"""Rows of the dummy sampler pass on an H100 (V1's max_num_seqs default on devices of 70 GiB and more)."""
ACCURACY = "llm-d-planner v0.19.0 log "
SWEEP = "llm-d-planner version sweep, Qwen/Qwen3-14B on H100 at "
EMPIRICAL = "llm-d empirical-vllm-memory-results, "


def visible(line: int) -> str:
    return f"{VISIBLE}:{line}"


def per_logit(peak_gib: float, vocab: int, rows: int = SEQUENCES) -> float:
    """Bytes per (sequence x vocab) logit of an activation peak the dummy sampler sets."""
    return peak_gib * GIB / (rows * vocab)


def per_layer_graph(total_gib: float, layers: int, sizes: int = 51) -> float:
    """MiB of the CUDA-graph estimate per decoder layer per captured batch size."""
    return total_gib * 1024 / (layers * sizes)


def _peak(point: str, model: str, gib: float, vocab: int) -> Observation:
    return Observation(point, f"{model}: activation peak {gib} GiB over {SEQUENCES} x {vocab:,} logits",
                       per_logit(gib, vocab))


def _graphs(point: str, model: str, gib: float, layers: int, sizes: int = 51) -> Observation:
    return Observation(point, f"{model}: 'Estimated CUDA graph memory: {gib} GiB' over {layers} layers x {sizes} sizes",
                       per_layer_graph(gib, layers, sizes))


def _non_torch(point: str, model: str, gib: float, base: float = 0.0, release: tuple[int, ...] | None = None
               ) -> Observation:
    less = f" less {base} GiB of one rank" if base else ""
    return Observation(point, f"{model}: non-torch {gib} GiB{less}", max(0.0, gib - base), release)


def _checked(point: str, logged: str) -> Observation:
    return Observation(point, logged)


SINGLE_RANK = 0.25
"""Single-rank non-torch GiB (``non_torch_gib``) the NVLink figures of 0.17+ are measured above."""
SINGLE_RANK_AFTER_SETUP = 0.13
"""Single-rank non-torch GiB from 0.11 to 0.16 (``non_torch_gib_after_setup``)."""

CALIBRATIONS: tuple[Calibration, ...] = (
    Calibration("sampler_bytes_per_logit_sort", MEDIAN, (
        _peak(visible(16), "meta-llama/Llama-3.1-8B-Instruct", 4.76, 128_256),
        _peak(visible(17), "Qwen/Qwen3-0.6B", 5.56, 151_936),
        _peak(visible(18), "Qwen/Qwen3-32B", 5.64, 151_936),
        _peak(EMPIRICAL + "openai/gpt-oss-20b TP1", "openai/gpt-oss-20b", 7.38, 201_088),
        _peak(EMPIRICAL + "openai/gpt-oss-120b TP1", "openai/gpt-oss-120b", 7.38, 201_088),
        _peak(SWEEP + "v0.15.0", "Qwen/Qwen3-14B", 5.64, 151_936),
        _peak(SWEEP + "v0.16.0", "Qwen/Qwen3-14B", 5.64, 151_936),
    ), unit="B/logit", step=0.1),
    Calibration("sampler_bytes_per_logit_triton", MEDIAN, (
        _peak(visible(40), "Qwen/Qwen2.5-7B-Instruct", 2.21, 152_064),
        _peak(ACCURACY + "qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192", "Qwen/Qwen3-8B", 2.21, 151_936),
        _peak(visible(43), "Qwen/Qwen3-14B", 2.23, 151_936),
        _peak(ACCURACY + "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384",
              "meta-llama/Llama-3.1-8B-Instruct", 1.89, 128_256),
        _peak(visible(37), "microsoft/phi-4", 1.52, 100_352),
        _peak(visible(33), "google/gemma-7b", 3.63, 256_000),
        _peak(ACCURACY + "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-9b-it", 3.65, 256_000),
        _peak(ACCURACY + "granite-3-1-2b--h100-80gb--tp1pp1dp1--8192", "ibm-granite/granite-3.1-2b-instruct",
              0.75, 49_155),
    ), unit="B/logit", step=0.1),
    Calibration("non_torch_gib", MEDIAN, (
        *(_non_torch(visible(n), model, gib) for n, model, gib in (
            (30, "deepseek-ai/DeepSeek-V2-Lite-Chat", 0.26),
            (32, "RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic", 0.24),
            (33, "google/gemma-7b", 0.25),
            (34, "meta-llama/Llama-3.1-8B-Instruct", 0.25),
            (36, "microsoft/phi-2", 0.24),
            (37, "microsoft/phi-4", 0.25),
            (40, "Qwen/Qwen2.5-7B-Instruct", 0.24),
            (41, "Qwen/Qwen3-30B-A3B", 0.27),
            (42, "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8", 0.26),
            (44, "Qwen/Qwen3-14B", 0.25),
        )),
        _non_torch(ACCURACY + "qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192", "Qwen/Qwen3-8B", 0.25),
        _checked(visible(13), "Qwen/Qwen2-7B-Instruct on A100 at 0.10.1.1: the logged KV memory within 0.05 GiB"),
        _checked(visible(14), "Qwen/Qwen2-7B-Instruct on A100 at 0.10.1.1: the logged KV memory within 0.05 GiB"),
    ), unit="GiB", step=0.01),
    Calibration("non_torch_gib_after_setup", MEDIAN, (
        _non_torch(SWEEP + "v0.15.0", "Qwen/Qwen3-14B", 0.13),
        _non_torch(SWEEP + "v0.16.0", "Qwen/Qwen3-14B", 0.13),
        _non_torch(visible(43), "Qwen/Qwen3-14B", 0.13),
        _non_torch(visible(16), "meta-llama/Llama-3.1-8B-Instruct", 0.13),
        _non_torch(visible(17), "Qwen/Qwen3-0.6B", 0.13),
        _non_torch(visible(18), "Qwen/Qwen3-32B", 0.14),
        _non_torch(visible(15), "mistralai/Mistral-Small-3.2-24B-Instruct-2506", 0.14),
    ), unit="GiB", step=0.01),
    Calibration("non_torch_gib_rocm", MEDIAN, (
        _non_torch("cmontemuino/amd-mi300x-ml-benchmarks (rocm/vllm 0.9.2.dev364, V0)", "MI300X", 0.66),
        _non_torch("24 GiB Radeon start-up log, vLLM 0.6.6 (V0)", "Radeon", 0.53),
        _non_torch("24 GiB Radeon start-up log, a vLLM fork (V0)", "Radeon", 0.62),
        _non_torch("MI50 start-up log, a vLLM 0.8.5 fork (V0)", "MI50", 0.46),
    ), unit="GiB", step=0.1),
    Calibration("comm_nvswitch_gib", MEDIAN, (
        _non_torch(visible(31), "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic TP4", 2.21, SINGLE_RANK),
        _non_torch(visible(35), "meta-llama/Llama-4-Scout-17B-16E-Instruct TP4", 2.17, SINGLE_RANK),
        _non_torch(visible(38), "moonshotai/Kimi-Dev-72B TP4", 2.21, SINGLE_RANK),
        _non_torch(visible(39), "openai/gpt-oss-20b TP2", 2.07, SINGLE_RANK),
        _non_torch(ACCURACY + "fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192",
                   "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic TP2", 2.10, SINGLE_RANK),
        _non_torch(ACCURACY + "w8a8-mistral-small-24b--h100-80gb--tp2pp1dp1--8192",
                   "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8 TP2", 2.07, SINGLE_RANK),
        _non_torch("SageMaker LMI DeepSeek-Coder-V2 walkthrough log (ml.p4d.24xlarge, vLLM 0.7.1 V0)",
                   "DeepSeek-Coder-V2-Lite TP8 on A100-SXM4-40GB", 2.10, SINGLE_RANK),
    ), unit="GiB", step=0.1),
    Calibration("comm_nvswitch_gib_after_setup", MEDIAN, (
        _non_torch(EMPIRICAL + "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic TP2", "Llama-3.3-70B-FP8 TP2", 0.55,
                   SINGLE_RANK_AFTER_SETUP),
        _non_torch(visible(19), "Qwen/Qwen3-32B TP2", 0.54, SINGLE_RANK_AFTER_SETUP),
    ), unit="GiB", step=0.01),
    Calibration("comm_pcie_gib_after_setup", MEDIAN, (
        _non_torch("vllm-project/vllm issue 'OPT-2.7B OOM while OPT-6.7B works fine' (4x A30, 0.11.1.dev12)",
                   "OPT TP4 on 4x A30", 0.09, SINGLE_RANK_AFTER_SETUP),
    ), unit="GiB", step=0.01),
    Calibration("cudagraph_gib_per_layer_graph", MEDIAN, (
        _graphs(ACCURACY + "codellama-codellama-7b-h--h100-80gb--tp1pp1dp1--8192", "codellama/CodeLlama-7b-hf",
                0.84, 32),
        _graphs(ACCURACY + "fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192",
                "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic TP2", 1.82, 80),
        _graphs(visible(31), "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", 1.70, 80),
        _graphs(visible(32), "RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic", 0.71, 28),
        _graphs(ACCURACY + "google-gemma-2-27b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-27b-it", 1.13, 46),
        _graphs(ACCURACY + "google-gemma-2-2b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-2b-it", 0.52, 26),
        _graphs(ACCURACY + "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-9b-it", 0.84, 42),
        _graphs(ACCURACY + "google-gemma-3-12b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-3-12b-it", 1.02, 48),
        _graphs(ACCURACY + "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-3-27b-it", 1.05, 62),
        _graphs(ACCURACY + "google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-3-4b-it", 0.70, 34),
        _graphs(visible(33), "google/gemma-7b", 0.84, 28),
        _graphs(ACCURACY + "granite-3-1-2b--h100-80gb--tp1pp1dp1--8192", "ibm-granite/granite-3.1-2b-instruct",
                1.60, 40),
        _graphs(ACCURACY + "granite-3-1-8b--h100-80gb--tp1pp1dp1--8192", "ibm-granite/granite-3.1-8b-instruct",
                0.74, 40),
        _graphs(ACCURACY + "meta-llama-llama-3---h100-80gb--tp1pp1dp1--8192-qfp8",
                "meta-llama/Llama-3.1-8B-Instruct --quantization fp8", 0.84, 32),
        _graphs(visible(34), "meta-llama/Llama-3.1-8B-Instruct", 0.80, 32),
        _graphs(ACCURACY + "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384",
                "meta-llama/Llama-3.1-8B-Instruct", 0.84, 32),
        _graphs(visible(35), "meta-llama/Llama-4-Scout-17B-16E-Instruct", 1.09, 48),
        _graphs(visible(36), "microsoft/phi-2", 0.55, 32),
        _graphs(visible(39), "openai/gpt-oss-20b", 1.09, 24, sizes=83),
        _graphs(ACCURACY + "qwen-qwen1-5-moe-a2-7b--h100-80gb--tp1pp1dp1--8192", "Qwen/Qwen1.5-MoE-A2.7B", 0.82, 24),
        _graphs(visible(42), "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8", 1.04, 40),
        _graphs(ACCURACY + "w8a8-mistral-small-24b--h100-80gb--tp2pp1dp1--8192",
                "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8 TP2", 1.60, 40),
        _graphs(ACCURACY + "w8a8-redhatai-qwen2-5-7b--h100-80gb--tp1pp1dp1--8192",
                "RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8", 0.81, 28),
    ), unit="MiB", step=0.1, scale=1 / 1024),
    Calibration("comm_pcie_gib", CHECKED, (
        _checked(visible(25), "Qwen3.6-27B-FP8 TP2 on 2x RTX 3090 at 0.24.0: logged KV 5.33 GiB, planned 5.32"),
    )),
    Calibration("sampler_bytes_per_logit_flashinfer", CHECKED, (
        _checked(visible(13), "Qwen/Qwen2-7B-Instruct on A100 at 0.10.1.1: 0.50-0.53 GiB besides weights and KV"),
        _checked(visible(14), "Qwen/Qwen2-7B-Instruct on A100 at 0.10.1.1: 0.50-0.53 GiB besides weights and KV"),
    )),
    Calibration("forward_bytes_per_token_unit", CHECKED, (
        _checked(visible(20), "meta-llama/Llama-3.1-8B-Instruct V0 on RTX 3090 at 20k tokens: peak_torch 2.07 GiB"),
        _checked(visible(21), "meta-llama/Llama-3.1-8B-Instruct V0 on RTX 3090 at 29k tokens: peak_torch 2.99 GiB"),
    )),
    Calibration("layer_hidden_rows", CHECKED, (
        _checked("SageMaker LMI DeepSeek-Coder-V2 walkthrough log (ml.p4d.24xlarge, vLLM 0.7.1 V0)",
                 "DeepSeek-Coder-V2-Lite TP8 over 8192 tokens: activation 0.36 GiB"),
    )),
    Calibration("sampler_bytes_per_logit_v0", CHECKED, (
        _checked("vllm-project/vllm#10511 sanity logs", "Meta-Llama-3-8B on H100: activation 1.26 GiB at 256 rows"),
    )),
    Calibration("marlin_scale_bytes", CHECKED, (
        _checked("noonghunna/club-3090 issues #602, #751", "27B FP8 on 2x RTX 3090: 14.68 GiB loaded per rank"),
    )),
    Calibration("vision_max_item_tokens", CHECKED, (
        _checked("noonghunna/club-3090 issues #602, #1047, #1107",
                 "'Encoder cache will be initialized with a budget of 16384 tokens'"),
    )),
    Calibration("rule:non_torch@0.18", BOUNDARY, (
        _non_torch(SWEEP + "v0.15.0", "Qwen/Qwen3-14B", 0.13, release=(0, 15)),
        _non_torch(SWEEP + "v0.16.0", "Qwen/Qwen3-14B", 0.13, release=(0, 16)),
        _non_torch(visible(43), "Qwen/Qwen3-14B", 0.13, release=(0, 17)),
        _non_torch(visible(44), "Qwen/Qwen3-14B", 0.25, release=(0, 18)),
    ), unit="GiB", levels=(value("non_torch_gib_after_setup"), value("non_torch_gib")),
        code_path="vllm/v1/worker/gpu_worker.py determine_available_memory at v0.18.0 "
                  "(profile_cudagraph_memory inside memory_profiling)"),
    Calibration("rule:sampler@0.11.1", CHECKED, (
        _checked(visible(15), "mistralai/Mistral-Small-3.2-24B-Instruct-2506 at 0.11.0: activation 2.12 GiB"),
        _checked(visible(16), "meta-llama/Llama-3.1-8B-Instruct (late-2025 image): activation 4.76 GiB"),
        _checked(visible(17), "Qwen/Qwen3-0.6B (late-2025 image): activation 5.56 GiB"),
        _checked(visible(18), "Qwen/Qwen3-32B (late-2025 image): activation 5.64 GiB"),
    ), code_path="vllm/v1/sample/ops/topk_topp_sampler.py at v0.11.1"),
    Calibration("rule:sampler@0.17", CHECKED, (
        _checked(SWEEP + "v0.16.0", "Qwen/Qwen3-14B: activation 5.64 GiB"),
        _checked(visible(43), "Qwen/Qwen3-14B at 0.17.0: activation 2.23 GiB"),
    ), code_path="vllm/v1/sample/ops/topk_topp_sampler.py at v0.17.0 apply_top_k_top_p"),
    Calibration("rule:tp_comm@0.11", CHECKED, (
        _checked(visible(19), "Qwen/Qwen3-32B TP2 (late-2025 image): non-torch 0.54 GiB"),
        _checked(EMPIRICAL + "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic TP2", "non-torch 0.55 GiB"),
        _checked("vllm-project/vllm issue 'OPT-2.7B OOM while OPT-6.7B works fine' (4x A30, 0.11.1.dev12)",
                 "non-torch 0.09 GiB at TP4"),
    ), code_path="vllm/v1/worker/gpu_worker.py init_device at v0.11.0"),
    Calibration("rule:tp_comm@0.17", CHECKED, tuple(
        _checked(visible(n), f"{model} at 0.19.0: non-torch {gib} GiB") for n, model, gib in (
            (31, "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic TP4", 2.21),
            (35, "meta-llama/Llama-4-Scout-17B-16E-Instruct TP4", 2.17),
            (38, "moonshotai/Kimi-Dev-72B TP4", 2.21),
            (39, "openai/gpt-oss-20b TP2", 2.07),
        )),
        code_path="requirements/cuda.txt torch==2.10.0 and vllm/config/vllm.py enable_allreduce_rms_fusion at v0.17.0"),
    Calibration("rule:profile_tokens@0.0", CHECKED, (
        _checked(visible(20), "meta-llama/Llama-3.1-8B-Instruct V0 at --max-model-len 20k: peak_torch 17.06 GiB"),
        _checked(visible(21), "meta-llama/Llama-3.1-8B-Instruct V0 at --max-model-len 29k: peak_torch 17.98 GiB"),
    ), code_path="vllm/worker/model_runner.py profile_run (V0)"),
)

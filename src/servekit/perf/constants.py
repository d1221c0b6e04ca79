"""Every number of the speed model that is not a device fact, with where it comes from.

``FITTED`` constants are fitted on the calibration set by ``servekit.perf.calibrate.fit_constants``
(coordinate descent over each constant's grid, minimising the mean |log(predicted / measured)| over
throughput, TPOT and TTFT): ``CALIBRATION_POINTS`` (ids of ``perf-points-visible.jsonl``),
``TABLE_CALIBRATION`` (half of TensorRT-LLM's published throughput table) and
``INFERENCEMAX_CALIBRATION`` (half of InferenceMAX v1's published runs), the three sources weighing
the same; "CALIBRATION_POINTS" in a source below means that set. ``bench/bench_perf_points.py``
refits them, reports the other points of each source apart and leaves each of the visible file's
calibration points out in turn. ``SOURCED`` constants come from the engines' code or
papers; ``ASSUMED`` ones are stated assumptions.
"""

from __future__ import annotations

from servekit.records import record

FITTED = "fitted"
SOURCED = "sourced"
ASSUMED = "assumed"


@record
class PerfConstant:
    id: str
    value: float
    kind: str
    unit: str
    source: str
    grid: tuple[float, ...] = ()
    """The values a fit may pick (FITTED only)."""


def _grid(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(round(lo + i * step, 6) for i in range(n + 1))


CALIBRATION_POINTS: tuple[str, ...] = (
    "trtllm-perfov-01",
    "trtllm-perfov-03",
    "trtllm-perfov-04",
    "trtllm-perfov-06",
    "trtllm-perfov-07",
    "trtllm-perfov-09",
    "gpustack-qwen3-32b-h100-vllm-L89",
    "gpustack-qwen3-32b-h100-sglang-L122",
    "gpustack-qwen3-32b-a100-vllm-L90",
    "gpustack-qwen3-14b-a100-sglang-L123",
    "gpustack-gpt-oss-20b-a100-vllm-L90",
    "gpustack-gpt-oss-20b-h100-vllm-L88",
    "gpustack-gpt-oss-120b-h100-vllm-L217",
    "gpustack-gpt-oss-120b-h100-vllm-L278",
    "gpustack-glm-4.5-air-h100-sglang-L196",
    "gpustack-glm-4.x-h200-vllm-L90",
    "gpustack-glm-4.x-h200-sglang-L227",
    "gpustack-deepseek-r1-h200-sglang-L191",
    "gpustack-deepseek-v3.2-h200-vllm-L101",
    "gpustack-deepseek-v3.2-h200-sglang-L459",
    "gpustack-qwen3-235b-a22b-h100-vllm-L88",
    "gpustack-qwen3-235b-a22b-a100-vllm-L90",
    "gpustack-qwen3-8b-h100-latency-vllm-L85",
    "gpustack-qwen3-8b-h100-latency-sglang-L119",
    "gpustack-gpt-oss-120b-h100-vllm-Lother-random_4K_input",
    "gpustack-glm-4.x-h200-vllm-Lother-ShareGPT_batch_size_4",
    "gpustack-deepseek-r1-h200-vllm-Lother-ShareGPT_batch_size_4",
)
"""The calibration subset: within each (engine, device) group of the visible file, every other
point in file order, starting with the first (the rule that chose them; every other visible
point is the evaluation set)."""

TABLE_CALIBRATION = ("bench/data/trtllm-perf-overview-v1.0.jsonl (bench/make_trtllm_overview_points.py: the rows of "
                     "TensorRT-LLM's published throughput table, docs/source/performance/perf-overview.md at "
                     "00f3768, that the visible file lacks), chosen by the same rule as CALIBRATION_POINTS "
                     "(servekit.perf.calibrate.calibration_half); the other rows are evaluation points")
"""The second calibration source: offline trtllm-bench runs of Llama-3.1-8B, 3.3-70B and 3.1-405B
(FP8 and NVFP4) on H100, H200, B200 and RTX PRO 6000, with input/output lengths from 128/128 to
20000/2000, which the visible file's short-prompt runs do not span."""

INFERENCEMAX_CALIBRATION = ("bench/data/inferencemax-v1.jsonl (bench/make_inferencemax_points.py: SemiAnalysis "
                            "InferenceMAX v1's published single-node runs, from the aggregates copied into "
                            "github:faradawn/InferenceMAX at 7a17504), chosen by the same rule as CALIBRATION_POINTS; "
                            "the other lines are evaluation points")
"""The third calibration source: closed loops of 4-256 clients at 1k/1k, 1k/8k and 8k/1k tokens of
gpt-oss-120b (vLLM 0.10-0.11 with async scheduling, TensorRT-LLM 1.1-1.2) and DeepSeek-R1 FP8, NVFP4
and MXFP4 (SGLang 0.5.2-0.5.3, TensorRT-LLM 1.1) on H100, H200, B200, MI300X, MI325X and MI355X: the only
TTFTs of TensorRT-LLM here, and the only recent releases of the three engines side by side."""

ENGINES = ("vllm", "sglang", "trtllm")
CPU_KEY = "vllm_cpu"
"""The suffix of the CPU backend's overhead constants (vLLM on the CPU platform)."""
OVERHEAD_KEYS = (*ENGINES, CPU_KEY)
STEP_MS = {"vllm": 0.5, "sglang": 4.0, "trtllm": 3.5}
SEQ_US = {"vllm": 80.0, "sglang": 160.0, "trtllm": 10.0}
REQUEST_MS = {"vllm": 30.0, "sglang": 52.5, "trtllm": 55.0}
"""The fitted per-engine overheads (``step_overhead_ms.ENGINE``, ``seq_overhead_us.ENGINE``,
``request_overhead_ms.ENGINE``)."""
OCCUPANCY = {"vllm": 0.35, "sglang": 0.65, "trtllm": 0.2}
"""The fitted share of an offline run's prompts each engine runs at once (``offline_occupancy.ENGINE``)."""

CPU_CALIBRATION = ("a small Llama (4 layers, hidden 1024, 8 heads, 8 KV heads, head_dim 128, intermediate 2816, "
                   "BF16, 104 MB) served by vLLM CPU 0.32.0 on the project's build machine (Intel Xeon reporting a "
                   "480 MiB L3, 2 vCPUs, KVM), prefix caching off; vllm bench serve, random dataset with "
                   "--ignore-eos, 40 prompts each, the CPU measured again before each: 128:64 at concurrency 1 and "
                   "16, 512:32 at concurrency 2, in six runs at different hours (2026-12-04 04:40, 2026-12-04 "
                   "23:50, 2026-12-05 02:20, 03:55, 06:00 and 09:50 UTC; bench/results/cpu-calibration-loads.jsonl, "
                   "bench/bench_cpu_overheads.py --stored)")
"""The calibration set of the CPU backend's constants. The run the engine test measures
(256:128 at concurrency 4) is none of them."""

CPU_FITTED = {"bandwidth_fraction": 0.7, "token_layer_overhead_us": 14.0, "step_overhead_ms": 2.0,
              "seq_overhead_us": 260.0, "request_overhead_ms": 10.0}
"""Fitted on ``CPU_CALIBRATION`` (``<name>.vllm_cpu`` for each name), the six runs' eighteen loads
together, each against the CPU row the probe measured just before it on the one CPU vLLM binds its
worker to. This machine's speed moves between hours and the probe follows only part of it: the
first morning run's model streamed at 18.9-20.7 GB/s and fitted alone 0.95 of it, the three night
runs' at 12.8-18.0 GB/s and fitted 0.65, 0.7 and 0.65, the second morning run's at 14.4-17.3 GB/s
and fitted 0.7, the mid-morning run's at 15.2-17.0 GB/s and fitted 0.8
(bench/results/cpu-overheads-2026-12-04-b.txt, -c.txt, cpu-overheads-2026-12-05.txt, -0355.txt,
-0604.txt, -0952.txt); fitted together, the constants sit between the hours, and the intervals
(``servekit.perf.intervals.CPU_INTERVAL80``) carry what is left.

The prompts' products run at the probe's rate whole (``flops_fraction.vllm_cpu`` = 1, a stated
rule: the probe runs the server's own kernel) and what a prefill spends beyond them is the per-token
cost of each layer (``token_layer_overhead_us``). Fitted before with a fitted share of the probe's
rate instead (0.6, and 310 us, 9 ms), the two forms fit the calibration machine alike (its loads'
product rates differ little, so a share and a per-token cost trade places), but only the per-token
form carries to a CPU whose products run thirteen times slower: on an Intel Xeon without AMX (0.08
TFLOPS through the same kernel against the calibration machine's 0.9-1.4), the engine test's load
had a median TTFT of 0.60 and 0.64 of the share form's prediction, and 0.96-1.01 of this form's
(bench/results/README.md, "The CPU's products at the probe's rate"). The fit is in
bench/results/cpu-overheads-stored-2026-12-06-0145.txt. (The share form's fit on the same loads:
0.7, 0.6, 2.0 ms, 310 us, 9 ms, bench/results/cpu-overheads-stored-2026-12-05-0954.txt; before
that, on the first morning run
alone: 0.9, 0.55, 2.5 ms, 220 us, 4 ms, bench/results/cpu-overheads-2026-12-04.txt; on the first
three runs: 0.7, 0.65, 2.25 ms, 160 us, 19 ms; on the first four: 0.7, 0.6, 2.25 ms, 250 us, 11 ms,
cpu-overheads-stored-2026-12-05-0401.txt; on the first five: 0.7, 0.6, 2.25 ms, 300 us, 10 ms,
cpu-overheads-stored-2026-12-05-0604.txt; on an AMD EPYC against a copy loop's bandwidth: 0.75,
0.85, 2.25 ms, 710 us, 0 ms, cpu-overheads-2026-12-02.txt.)"""

CPU_CONSTANTS: tuple[PerfConstant, ...] = (
    PerfConstant("bandwidth_fraction.vllm_cpu", CPU_FITTED["bandwidth_fraction"], FITTED,
                 "share of the measured CPU memory bandwidth",
                 "fitted on CPU_CALIBRATION (weights the probe streamed through the server's kernel, at the "
                 "rate of a set of the model's size, against vLLM CPU's weight and KV reads)",
                 _grid(0.05, 1.5, 0.05)),
    PerfConstant("token_layer_overhead_us.vllm_cpu", CPU_FITTED["token_layer_overhead_us"], FITTED,
                 "microseconds per token of a step per decoder layer",
                 "fitted on CPU_CALIBRATION (the work of each token outside the projections' products: norms, "
                 "rotary embedding, the gated activation, residual adds)", _grid(0.0, 100.0, 1.0)),
    PerfConstant("step_overhead_ms.vllm_cpu", CPU_FITTED["step_overhead_ms"], FITTED, "milliseconds per engine step",
                 "fitted on CPU_CALIBRATION (the CPU backend's scheduling, sampling, detokenizing and the Python "
                 "of its forward pass; valid for the machine it was measured on)", _grid(0.0, 15.0, 0.25)),
    PerfConstant("seq_overhead_us.vllm_cpu", CPU_FITTED["seq_overhead_us"], FITTED,
                 "microseconds per running sequence per step",
                 "fitted on CPU_CALIBRATION (input preparation, sampling, streaming per sequence)",
                 _grid(0.0, 1000.0, 10.0)),
    PerfConstant("request_overhead_ms.vllm_cpu", CPU_FITTED["request_overhead_ms"], FITTED,
                 "milliseconds per request before its first step",
                 "fitted on CPU_CALIBRATION (HTTP, tokenizing and admitting a request: the API server shares the "
                 "CPU with the engine)", _grid(0.0, 100.0, 1.0)),
)

HOPPER_PROBE = ("bench/results/gpu-probe-h200-2026-12-04.json: bench/gpu_probe.py on an NVIDIA H200 (SXM, 700 W, "
                "driver 580.159.04, torch 2.11.0+cu130 with cuBLAS), 2026-12-04; a second run (-b.json) agreed "
                "within 2% on every GEMM and copy figure, a third (-c.json) added FP8 streams and expert shapes")
"""Where the Hopper figures were measured: the AMD scales' reference and the routed experts'
streaming share (``moe_bandwidth_share``)."""
HOPPER_GEMM_SHARE = {"bf16": 709.44 / 989.4, "fp8": 1243.95 / 1978.9}
"""Share of the datasheet's dense TFLOPS an H200 sustained in cuBLAS products (``HOPPER_PROBE``): the
best shape's median (4096 x 8192 x 8192 in BF16, 8192 x 8192 x 28672 in FP8) of the twelve shapes
measured, as the AMD blog reports the best of its sweep."""
HOPPER_GROUPED_SHARE = 0.7646
"""Routed experts' weights against dense weights streamed on the H200 of ``HOPPER_PROBE``, its third
run (gpu-probe-h200-2026-12-04-c.json): for each of three expert shapes (64 x 4096 x 3072, DeepSeek-V3's
64 x 7168 x 4096, Qwen3-30B-A3B's 128 x 2048 x 1536) in BF16 (``torch._grouped_mm``) and FP8
(``torch._scaled_grouped_mm``), the median rate over 1-64 tokens per expert over the median rate of
dense products of the same format at 1-32 rows; the median of the six ratios (0.63-0.79)."""
HOPPER_COPY_SHARE = 4214.59 / 4800.0
"""Share of the datasheet's 4.8 TB/s an H200 sustained copying 4 GiB on the device (bytes read +
written; ``HOPPER_PROBE``)."""
AMD_GEMM_SHARE = {"bf16": 708.0 / 1307.0, "fp8": 1273.0 / 2615.0}
"""MI300X's sustained share of its datasheet TFLOPS in hipBLASLt (the AMD blog of ``flops_scale.amd``)."""
AMD_COPY_SHARE = 0.81
"""MI300X's share of its 5.3 TB/s in public copy measurements."""
AMD_FLOPS_SCALE = round(sum(AMD_GEMM_SHARE[f] / HOPPER_GEMM_SHARE[f] for f in AMD_GEMM_SHARE) / len(AMD_GEMM_SHARE), 2)
AMD_BANDWIDTH_SCALE = round(AMD_COPY_SHARE / HOPPER_COPY_SHARE, 2)


CONSTANTS: tuple[PerfConstant, ...] = (
    PerfConstant("bandwidth_fraction", 0.8, FITTED, "share of the datasheet memory bandwidth",
                 "fitted on CALIBRATION_POINTS, on a grid that stops at the share an H200 streamed weights at in "
                 "isolated decode products (HOPPER_PROBE: 0.79-0.81 of the datasheet at 1-32 rows): a whole "
                 "engine's step reads no faster than its kernels do", _grid(0.4, 0.8, 0.05)),
    PerfConstant("flops_fraction", 0.2, FITTED, "share of the datasheet dense FLOPs",
                 "fitted on CALIBRATION_POINTS (every device generation without its own entry)",
                 _grid(0.05, 0.9, 0.05)),
    PerfConstant("flops_fraction.ampere", 0.55, FITTED, "share of the datasheet dense FLOPs on Ampere parts",
                 "fitted on the A100 points of CALIBRATION_POINTS (Ampere's datasheet peak is the more "
                 "attainable one: the A100 points run prefill-heavy steps at half of it)",
                 _grid(0.05, 0.95, 0.05)),
    PerfConstant("flops_fraction.fp4", 0.15, FITTED, "share of the datasheet dense FP4 FLOPs (the linears of an "
                 "NVFP4 or MXFP4 checkpoint on a part with an FP4 rate)",
                 "fitted on the FP4 points of the calibration set (TensorRT-LLM's NVFP4 runs of Llama 3.3 70B and 3.1 "
                 "405B on B200 and RTX PRO 6000 in TABLE_CALIBRATION; gpt-oss-120b's MXFP4 and DeepSeek-R1's NVFP4 on "
                 "B200 and its MXFP4 on MI355X in INFERENCEMAX_CALIBRATION): their steps reach a smaller share of the doubled FP4 rate than "
                 "FP8 and BF16 products reach of theirs",
                 _grid(0.05, 0.95, 0.05)),
    PerfConstant("moe_flops_share", 0.46, FITTED, "routed-expert FLOP/s as a share of the dense achievable FLOP/s",
                 "fitted on CALIBRATION_POINTS (the grid stops at 1: grouped expert GEMMs no faster than dense ones)",
                 _grid(0.02, 1.0, 0.02)),
    PerfConstant("moe_bandwidth_share", round(HOPPER_GROUPED_SHARE, 2), SOURCED,
                 "routed-expert weight bytes/s as a share of the dense achievable bytes/s (GPUs)",
                 "HOPPER_PROBE (HOPPER_GROUPED_SHARE): grouped expert products of a few tokens per expert streamed "
                 "their weights at 63-79% (median 76%) of the rate dense decode products did on an H200; assumed "
                 "to hold for the engines' fused MoE kernels and for other GPUs"),
    PerfConstant("moe_bandwidth_share.fp4", 1.0, FITTED,
                 "routed-expert weight bytes/s as a share of the dense achievable bytes/s, for experts in a 4-bit "
                 "format on a part with an FP4 rate",
                 "fitted on the FP4 MoE points of the calibration set (gpt-oss-120b's MXFP4 on B200 and MI355X, "
                 "DeepSeek-R1's NVFP4 on B200 and MXFP4 on MI355X, in INFERENCEMAX_CALIBRATION): the engines run such "
                 "experts through their own FP4 kernels, not the grouped products HOPPER_PROBE timed; the fit ends at "
                 "the top of the grid, where the experts stream as fast as dense weights "
                 "(bench/results/README.md, 'FP4 experts')", _grid(0.5, 1.0, 0.02)),
    PerfConstant("allreduce_latency_us", 30.0, FITTED, "microseconds per TP all-reduce",
                 "fitted on CALIBRATION_POINTS (the fixed cost of one all-reduce, apart from its bytes)",
                 _grid(0.0, 200.0, 5.0)),
    *(PerfConstant(f"offline_occupancy.{engine}", OCCUPANCY[engine], FITTED,
                   "share of an offline run's prompts running at once",
                   f"fitted on the offline {engine} points of CALIBRATION_POINTS: when every prompt is sent at once "
                   "and the scheduler and pool admit them all, the running batch averages this share of them "
                   "(requests of varying lengths finish apart; each engine admits in its own order)",
                   _grid(0.2, 1.0, 0.05)) for engine in ENGINES),
    PerfConstant("flops_scale.trtllm", 2.8, FITTED, "achievable FLOP/s of TensorRT-LLM as a multiple of the "
                 "fitted share (vLLM's and SGLang's)",
                 "fitted on CALIBRATION_POINTS: TensorRT-LLM's prompt-heavy runs of TABLE_CALIBRATION need "
                 "more FLOP/s than vLLM's and SGLang's served runs show", _grid(0.5, 4.0, 0.1)),
    PerfConstant("mla_seq_layer_us", 3.0, FITTED, "microseconds per decoding sequence per MLA layer per step and rank",
                 "fitted on CALIBRATION_POINTS (MLA's absorbed decode attention on a rank that holds a sequence's "
                 "latent cache, beyond the latent's bytes and FLOPs)", _grid(0.0, 10.0, 0.25)),
    PerfConstant("seq_layer_us", 0.25, FITTED, "microseconds per running sequence per decoder layer per step and "
                 "stage, on GPUs (models without MLA, whose sequences cost mla_seq_layer_us instead)",
                 "fitted on CALIBRATION_POINTS (what the device spends on each sequence in each layer beyond its KV "
                 "bytes and FLOPs: the paged attention's per-sequence work, the KV-cache write and rotary of its "
                 "token; with it the calibration loss falls from 0.1820, the best descent without it, to 0.1706, "
                 "bench/results/README.md 'A cost per sequence per layer')", _grid(0.0, 10.0, 0.25)),
    PerfConstant("layer_overhead_us", 47.5, FITTED, "microseconds per decoder layer per step and stage",
                 "fitted on CALIBRATION_POINTS (kernel launches and what else a layer costs beyond its weight, KV "
                 "and activation bytes and its FLOPs)", _grid(0.0, 60.0, 2.5)),
    *(PerfConstant(f"step_overhead_ms.{engine}", STEP_MS[engine], FITTED, "milliseconds per engine step",
                   f"fitted on the {engine} points of CALIBRATION_POINTS (scheduling, sampling, detokenizing)",
                   _grid(0.0, 15.0, 0.5)) for engine in ENGINES),
    *(PerfConstant(f"seq_overhead_us.{engine}", SEQ_US[engine], FITTED,
                   "microseconds per running sequence per step",
                   f"fitted on the {engine} points of CALIBRATION_POINTS (the CPU work each sequence costs "
                   "per step: input preparation, sampling, detokenizing, streaming)",
                   _grid(0.0, 300.0, 5.0)) for engine in ENGINES),
    *(PerfConstant(f"request_overhead_ms.{engine}", REQUEST_MS[engine], FITTED, "milliseconds per request",
                   f"fitted on the {engine} points of CALIBRATION_POINTS (what a request's first token spends "
                   "outside the engine's steps: HTTP handling, tokenizing, the hand-over between the API server "
                   "and the engine process, streaming the first chunk back)", _grid(0.0, 100.0, 2.5))
      for engine in ENGINES),
    PerfConstant("flops_scale.amd", AMD_FLOPS_SCALE, SOURCED, "achievable FLOP/s share of an Instinct part relative "
                 "to the NVIDIA parts the fractions are fitted on",
                 "AMD ROCm blog 'Measuring Max-Achievable FLOPs - Part 2' "
                 "(https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-part2/"
                 "README.html): MI300X sustains 708 of its 1,307 peak BF16 TFLOPS (54%) and 1,273 of 2,615 FP8 "
                 "(49%) in hipBLASLt GEMMs; against Hopper's cuBLAS GEMMs measured on an H200 (HOPPER_PROBE: "
                 "72% BF16, 63% FP8, HOPPER_GEMM_SHARE); the mean of the two formats' ratios"),
    PerfConstant("bandwidth_scale.amd", AMD_BANDWIDTH_SCALE, SOURCED, "achievable memory bandwidth share of an "
                 "Instinct part relative to the NVIDIA parts the fraction is fitted on",
                 "MI300X copies at about 81% of its 5.3 TB/s in public measurements, against 88% of 4.8 TB/s an "
                 "H200 copied at (HOPPER_PROBE, HOPPER_COPY_SHARE)"),
    *CPU_CONSTANTS,
    PerfConstant("flops_fraction.vllm_cpu", 1.0, ASSUMED, "share of the measured CPU BF16 FLOP/s",
                 "the probe's product runs through the server's own linear kernel (vLLM CPU's dispatch, "
                 "servekit.perf.cpu_probe), so a prompt's projections get its rate whole; on the build machine's "
                 "Xeon without AMX that kernel's rate held from 16 to 2048 rows (0.083-0.086 TFLOPS on 1024 x 1024, "
                 "2816 x 1024 and 2048 x 2048 weights, 2026-12-06); what a step spends beside the products is "
                 "token_layer_overhead_us.vllm_cpu"),
    PerfConstant("layer_overhead_us.vllm_cpu", 0.0, ASSUMED, "microseconds per decoder layer per step",
                 "the CPU backend's per-layer costs are inside its step overhead: CPU_FITTED was fitted with no "
                 "per-layer term"),
    PerfConstant("acceptance.mtp", 0.85, SOURCED, "probability a drafted token is accepted",
                 "DeepSeek-V3 technical report, https://arxiv.org/abs/2412.19437 section 5.4.3: the second "
                 "token's acceptance rate is 85-90%"),
    PerfConstant("acceptance.eagle3", 0.75, ASSUMED, "probability a drafted token is accepted",
                 "assumed from EAGLE-3, https://arxiv.org/abs/2503.01840 (acceptance lengths of 3-4 tokens "
                 "per step at chain depth 4 on chat data)"),
    PerfConstant("acceptance.eagle", 0.7, ASSUMED, "probability a drafted token is accepted",
                 "assumed from EAGLE, https://arxiv.org/abs/2401.15077 (about 0.7 per drafted token on MT-bench)"),
    PerfConstant("acceptance.other", 0.6, ASSUMED, "probability a drafted token is accepted",
                 "assumed for draft models and n-gram drafting (no figure read)"),
    PerfConstant("max_batch.trtllm", 2048, SOURCED, "sequences",
                 "TensorRT-LLM tensorrt_llm/builder.py BuildConfig.max_batch_size default 2048"),
    PerfConstant("max_tokens.trtllm", 8192, SOURCED, "tokens per step",
                 "TensorRT-LLM tensorrt_llm/builder.py BuildConfig.max_num_tokens default 8192"),
    PerfConstant("max_batch.sglang.spec", 48, SOURCED, "sequences",
                 "SGLang python/sglang/srt/server_args.py (_handle_speculative_decoding): 'Max running requests is "
                 "reset to 48 for speculative decoding' (EAGLE, EAGLE3, NEXTN/MTP, STANDALONE)"),
    PerfConstant("default_num_prompts", 1000, SOURCED, "requests",
                 "vllm bench serve --num-prompts default 1000 (vllm/benchmarks/serve.py)"),
)

_BY_ID = {c.id: c for c in CONSTANTS}


def constant(key: str) -> float:
    return _BY_ID[key].value


def fitted_ids() -> tuple[str, ...]:
    return tuple(c.id for c in CONSTANTS if c.kind == FITTED)


def fitted_values() -> dict[str, float]:
    return {c.id: c.value for c in CONSTANTS if c.kind == FITTED}


def flops_fraction(values: dict[str, float], generation: str | None, fmt: str | None = None) -> float:
    """The achievable share of datasheet FLOPs: the format's own entry, else the generation's, else
    the general one."""
    if fmt and f"flops_fraction.{fmt}" in values:
        return values[f"flops_fraction.{fmt}"]
    return values.get(f"flops_fraction.{(generation or '').lower()}", values["flops_fraction"])


def vendor_scale(kind: str, generation: str | None) -> float:
    """``flops`` or ``bandwidth``: the scale an AMD part's achievable share takes against the
    fitted (NVIDIA) one; 1 for every other part."""
    key = f"{kind}_scale.{(generation or '').lower()}"
    return _BY_ID[key].value if key in _BY_ID else 1.0


def acceptance(method: str | None) -> float:
    """The acceptance rate assumed for a speculative method when the launch states none."""
    key = f"acceptance.{(method or '').lower()}"
    return _BY_ID[key].value if key in _BY_ID else _BY_ID["acceptance.other"].value

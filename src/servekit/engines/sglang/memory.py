"""SGLang's default ``--mem-fraction-static`` when a launch leaves it unset, per release.

The fraction is (weights + KV pool) / device memory; activations, CUDA graphs and metadata live in
the rest. Each release's ``sglang/srt/server_args.py`` (from 0.5.15 ``arg_groups/memory_hook.py``)
picks it from the memory the GPU reports (MiB) and the launch, by a rule that changed three times
(wheels of 0.4.6.post5 to 0.5.23 read):

* before 0.4.8: by TP x PP on GPUs of at most 80 GiB (0.88 alone, 0.87 from 2, 0.85 from 4, 0.81
  from 8, 0.79 from 16; 0.88 on larger GPUs); over 96 GiB raised toward keeping 18 GiB (20 with
  speculative decoding) free, else speculative decoding takes 0.95 of it; 0.4.7 takes 0.79 on CUDA
  GPUs over 180,000 MiB;
* 0.4.8 to 0.5.2: a reserve by the GPU's memory: (2.8 + TP x PP / 10) GiB under 35 GiB,
  (9.5 + TP x PP / 2) GiB under 90, (12 + TP x PP / 2) GiB under 160, 32 GiB above; 2 GiB more with
  speculative decoding (6 for a standalone draft model, 0.5.2);
* from 0.5.3: a reserve of 512 MiB + 1.5 MiB per token of the step's budget (at least 2048) + 2 MiB
  per sequence of the largest decode CUDA graph + TP x PP / 8 GiB, at least 10 GiB on GPUs over
  60 GiB, plus 2 GiB with speculative decoding (0 for n-gram, 6 for a standalone draft model);
* from 0.5.10: piecewise CUDA graphs of the prefill are on by default and reserve 8 MiB per captured
  size (sizes up to the step's budget) or, on an MLA backend, 1.5 GiB; speculative decoding 4 GiB.

Then fraction = round((gpu_mem - reserved) / gpu_mem, 3); a GPU of unknown memory takes 0.88
(0.95 from 0.5.20). Not modelled: DP attention's and DeepEP's reserves, the multimodal
adjustment, and the post-capture KV sizing an environment variable turns on.
"""

from __future__ import annotations

from packaging.version import Version

from servekit.engines.sglang.scheduler import at_least, chunked_prefill_tokens, release_of

GIB_MIB = 1024
LARGE_GPU_MIB = 60 * GIB_MIB
LARGE_GPU_FLOOR_MIB = 10 * GIB_MIB
TP_TABLE = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
"""(TP x PP at least, fraction) before 0.4.8, on GPUs of at most 80 GiB."""
TIER_RESERVE_GIB = ((35.0, 2.8, 10.0), (90.0, 9.5, 2.0), (160.0, 12.0, 2.0))
"""(GPU memory under, reserve GiB, TP x PP divided by) for 0.4.8 to 0.5.2; 32 GiB above."""


def decode_graph_max_bs(gpu_mem_mib: float, tp: int, release: Version | None) -> int:
    """The largest decode CUDA graph SGLang captures by default (0.5.3 on)."""
    gib = gpu_mem_mib / GIB_MIB
    if gib < 20:
        return 8
    if gib < 35:
        return (24 if at_least(release, "0.5.4") else 16) if tp < 4 else 80
    if gib < 60:
        return 32 if tp < 4 else 160
    if gib < 160:
        return 256 if tp < 4 else 512
    return 512


def prefill_graph_sizes(max_tokens: int) -> int:
    """How many prefill sizes the piecewise CUDA graphs capture, up to ``max_tokens`` tokens."""
    steps = ((4, 32, 4), (48, 256, 16), (288, 512, 32), (576, 1024, 64), (1280, 4096, 256), (4608, max_tokens, 512))
    return sum(len(range(lo, min(hi, max_tokens) + 1, step)) for lo, hi, step in steps)


def _speculative_mib(speculative: str | None, release: Version | None) -> float:
    if not speculative:
        return 0.0
    method = speculative.lower()
    if method == "standalone" and at_least(release, "0.5.2"):
        return 6.0 * GIB_MIB
    if method == "ngram" and at_least(release, "0.5.3"):
        return 0.0
    return (4.0 if at_least(release, "0.5.10") else 2.0) * GIB_MIB


def _before_048(gpu_mem_mib: float, parallel: int, speculative: str | None, release: Version | None) -> float:
    fraction = next(f for at_least, f in TP_TABLE if parallel >= at_least) if gpu_mem_mib <= 81920 else 0.88
    if release is not None and release >= Version("0.4.7") and gpu_mem_mib > 180_000:
        return 0.79  # CUDA GPUs only; the planner's devices of this size are NVIDIA's B200 class
    if gpu_mem_mib > 96 * GIB_MIB:
        keep = (20 if speculative else 18) * GIB_MIB
        return min(fraction + 48 * GIB_MIB * (1 - fraction) / gpu_mem_mib, (gpu_mem_mib - keep) / gpu_mem_mib)
    return fraction * 0.95 if speculative else fraction


def reserved_mib(gpu_mem_mib: float, tp: int = 1, pp: int = 1, version: str | None = None,
                 chunked_prefill_size: int | None = None, speculative: str | None = None, mla: bool = False) -> float:
    """Memory SGLang keeps outside the static pool (0.4.8 on), in MiB."""
    release = release_of(version)
    parallel = tp * pp
    if not at_least(release, "0.5.3"):
        gib = gpu_mem_mib / GIB_MIB
        reserve = next(((base + parallel / per) * GIB_MIB for under, base, per in TIER_RESERVE_GIB if gib < under),
                       32.0 * GIB_MIB)
        return reserve + _speculative_mib(speculative, release)
    budget = chunked_prefill_size or chunked_prefill_tokens(gpu_mem_mib / GIB_MIB, version)
    reserve = 512 + max(budget, 2048) * 1.5 + decode_graph_max_bs(gpu_mem_mib, tp, release) * 2 + parallel / 8 * 1024
    if at_least(release, "0.5.10"):
        reserve += 1.5 * GIB_MIB if mla else prefill_graph_sizes(budget) * 8
    if gpu_mem_mib > LARGE_GPU_MIB:
        reserve = max(reserve, LARGE_GPU_FLOOR_MIB)
    return reserve + _speculative_mib(speculative, release)


def default_mem_fraction_static(gpu_mem_mib: float | None, tp: int = 1, pp: int = 1, version: str | None = None,
                                chunked_prefill_size: int | None = None, speculative: str | None = None,
                                mla: bool = False) -> float:
    """The fraction SGLang ``version`` picks for (weights + KV pool) / device memory."""
    release = release_of(version)
    if not gpu_mem_mib:
        return 0.95 if at_least(release, "0.5.20") else 0.88
    if not at_least(release, "0.4.8"):
        return _before_048(gpu_mem_mib, tp * pp, speculative, release)
    reserve = reserved_mib(gpu_mem_mib, tp, pp, version, chunked_prefill_size, speculative, mla)
    return round((gpu_mem_mib - reserve) / gpu_mem_mib, 3)

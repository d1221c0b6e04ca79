"""SGLang's default ``--mem-fraction-static`` when a launch leaves it unset.

Follows sglang 0.5.23, ``sglang.srt.arg_groups.memory_hook.handle_gpu_memory_settings`` (the
branch without post-capture KV sizing): reserved MiB = 512 + 1.5 x activation tokens
(max(chunked prefill size, 2048)) + tp x pp / 8 x 1024 + the CUDA graph reserve, at least
10 GiB on GPUs over 60 GiB; fraction = round((gpu_mem - reserved) / gpu_mem, 3), 0.95 when the
device memory is unknown. The CUDA graph reserve and DeepEP buffers depend on the model and
are passed in (``graph_reserve_mib``).
"""

from __future__ import annotations

UNKNOWN_DEVICE_FRACTION = 0.95
LARGE_GPU_MIB = 60 * 1024
LARGE_GPU_FLOOR_MIB = 10 * 1024


def reserved_mib(tp: int = 1, pp: int = 1, chunked_prefill_size: int = 8192, graph_reserve_mib: float = 0.0,
                 gpu_mem_mib: float | None = None) -> float:
    """Memory SGLang keeps outside the static pool (activations, metadata, graphs), in MiB."""
    activation_tokens = max(chunked_prefill_size, 2048)
    reserved = 512 + activation_tokens * 1.5 + tp * pp / 8 * 1024 + graph_reserve_mib
    if gpu_mem_mib is not None and gpu_mem_mib > LARGE_GPU_MIB:
        reserved = max(reserved, LARGE_GPU_FLOOR_MIB)
    return reserved


def default_mem_fraction_static(gpu_mem_mib: float | None, tp: int = 1, pp: int = 1,
                                chunked_prefill_size: int = 8192, graph_reserve_mib: float = 0.0) -> float:
    """The fraction SGLang picks for (weights + KV pool) / device memory."""
    if gpu_mem_mib is None:
        return UNKNOWN_DEVICE_FRACTION
    reserved = reserved_mib(tp, pp, chunked_prefill_size, graph_reserve_mib, gpu_mem_mib)
    return round((gpu_mem_mib - reserved) / gpu_mem_mib, 3)

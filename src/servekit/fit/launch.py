"""The launch settings that decide memory, read from a vLLM argv by the one vLLM argv reader."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from servekit.engines.vllm.launch import Option, parse_length, parse_vllm_argv
from servekit.errors import ServekitError
from servekit.records import record


@record
class LaunchSettings:
    """The launch options that decide memory: parallel sizes, context length, KV dtype, limits."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    dcp: int = 1
    expert_parallel: bool = False
    max_model_len: int | None = None
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int | None = None
    enforce_eager: bool = False
    language_model_only: bool = False
    mm_encoder_data_parallel: bool = False
    """--mm-encoder-tp-mode data: every TP rank holds the whole multimodal encoder and the ranks
    split the encoder's batch instead (vllm/config/multimodal.py MultiModalConfig.mm_encoder_tp_mode)."""
    prefix_caching: bool | None = None
    """--enable-prefix-caching / --no-enable-prefix-caching; None: the engine's default
    (``servekit.fit.versions.VllmRun.prefix_caching``)."""
    chunked_prefill: bool | None = None
    """--enable-chunked-prefill / --no-enable-chunked-prefill; None: the engine's default."""
    async_scheduling: bool | None = None
    """--async-scheduling / --no-async-scheduling; None: the release's default
    (``servekit.fit.release_rules``, rule ``async_scheduling``)."""
    spec_method: str | None = None
    spec_tokens: int = 0
    spec_draft_model: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    kv_cache_memory_bytes: int | None = None
    offline: bool = False
    """An ``LLM()`` run rather than the OpenAI server: other scheduler defaults (no flag sets it)."""
    draft_layers: int | None = None
    """Decoder layers of a separate draft network (EAGLE heads, draft models), when known."""
    mamba_ssm_cache_dtype: str | None = None
    """--mamba-ssm-cache-dtype: the dtype of a linear-attention layer's recurrent state ("auto":
    the config's ``mamba_ssm_dtype``, else the model dtype; ``servekit.facts.linear``)."""
    mm_limits: tuple[tuple[str, int], ...] = ()
    """``--limit-mm-per-prompt``: items allowed per prompt, per modality named (the others keep
    vLLM's default, ``servekit.fit.encoder.DEFAULT_MM_LIMIT``)."""

    def __post_init__(self) -> None:
        for field, flag in _AT_LEAST_ONE.items():
            value = getattr(self, field)
            if value is not None and value < 1:
                raise LaunchArgsError(f"{flag} {value}: must be at least 1", fix=f"pass a positive {flag}")
        util = self.gpu_memory_utilization
        if util is not None and not 0 < util <= 1:
            raise LaunchArgsError(f"--gpu-memory-utilization {util}: must be above 0 and at most 1",
                                  fix="pass a fraction of device memory such as 0.9")

    @property
    def uses_mtp(self) -> bool:
        return bool(self.spec_method) and "mtp" in str(self.spec_method)

    @property
    def uses_eagle(self) -> bool:
        return bool(self.spec_method) and "eagle" in str(self.spec_method).lower()


_AT_LEAST_ONE = {
    "tp": "--tensor-parallel-size",
    "pp": "--pipeline-parallel-size",
    "dp": "--data-parallel-size",
    "dcp": "--decode-context-parallel-size",
    "max_model_len": "--max-model-len",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "block_size": "--block-size",
}


_INT = {
    "--tensor-parallel-size": "tp",
    "--pipeline-parallel-size": "pp",
    "--data-parallel-size": "dp",
    "--decode-context-parallel-size": "dcp",
    "--max-num-seqs": "max_num_seqs",
    "--max-num-batched-tokens": "max_num_batched_tokens",
    "--block-size": "block_size",
    "--kv-cache-memory-bytes": "kv_cache_memory_bytes",
}
_STR = {"--kv-cache-dtype": "kv_cache_dtype", "--quantization": "quantization", "--dtype": "dtype",
        "--mamba-ssm-cache-dtype": "mamba_ssm_cache_dtype"}
_SWITCHES = {
    "--enforce-eager": "enforce_eager",
    "--language-model-only": "language_model_only",
    "--enable-prefix-caching": "prefix_caching",
    "--enable-expert-parallel": "expert_parallel",
    "--enable-chunked-prefill": "chunked_prefill",
    "--async-scheduling": "async_scheduling",
}


class LaunchArgsError(ServekitError):
    """An option value in the launch argv cannot be read."""


def _speculative(settings: LaunchSettings, raw: str) -> LaunchSettings:
    try:
        spec = json.loads(raw)
    except json.JSONDecodeError:
        raise LaunchArgsError(f"--speculative-config is not JSON: {raw!r}") from None
    if not isinstance(spec, dict):
        raise LaunchArgsError("--speculative-config must be a JSON object")
    return replace(
        settings,
        spec_method=spec.get("method"),
        spec_tokens=int(spec.get("num_speculative_tokens") or 0),
        spec_draft_model=spec.get("model"),
    )


def _mm_limits(raw: str) -> tuple[tuple[str, int], ...]:
    """``--limit-mm-per-prompt`` as (modality, items) pairs: JSON (``{"image": 2}``, or per modality
    an object whose ``count`` is the limit, ``vllm/config/multimodal.py`` ``get_limit_per_prompt``)
    or the older ``image=2,video=1`` form."""
    try:
        limits = json.loads(raw)
    except json.JSONDecodeError:
        limits = dict(part.split("=", 1) for part in raw.split(",") if "=" in part)
    if not isinstance(limits, dict):
        raise LaunchArgsError(f"--limit-mm-per-prompt {raw!r}: not a limit per modality",
                              fix='pass JSON such as \'{"image": 2, "video": 1}\'')
    out = []
    for modality, value in limits.items():
        count = value.get("count", 1) if isinstance(value, dict) else value
        try:
            out.append((str(modality), int(count)))
        except (TypeError, ValueError):
            raise LaunchArgsError(f"--limit-mm-per-prompt: {modality} limit {value!r} is not a count") from None
    return tuple(out)


def _no_media(limits: tuple[tuple[str, int], ...]) -> bool:
    """Limits allowing no image and no item of any other modality named: the tower is not loaded.
    A modality left unnamed keeps vLLM's default of 999, so ``{"video": 0}`` alone still allows
    images; ``{"image": 0}`` alone is read as no media (every tower takes images; a Qwen-VL tower
    would still profile video, which this reading leaves out)."""
    named = dict(limits)
    return named.get("image") == 0 and all(count == 0 for count in named.values())


def _apply(settings: LaunchSettings, option: Option) -> LaunchSettings:
    """One option (as vLLM's parser reads it) applied to the settings; the last occurrence wins."""
    flag, value = option.flag, option.values[-1] if option.values else None
    for name, field in _SWITCHES.items():
        if flag in (name, "--no-" + name[2:]):
            return replace(settings, **{field: flag == name})
    if value is None:
        return settings
    if flag in _INT:
        return replace(settings, **{_INT[flag]: int(float(value))})
    if flag in _STR:
        return replace(settings, **{_STR[flag]: value})
    if flag == "--max-model-len":
        return replace(settings, max_model_len=parse_length(value))
    if flag == "--gpu-memory-utilization":
        return replace(settings, gpu_memory_utilization=float(value))
    if flag == "--mm-encoder-tp-mode":
        return replace(settings, mm_encoder_data_parallel=value == "data")
    if flag == "--limit-mm-per-prompt" or flag.startswith("--limit-mm-per-prompt."):
        # the dotted form sets one modality: --limit-mm-per-prompt.video 0 (vLLM's JSON-argument keys)
        named = _mm_limits(value) if flag == "--limit-mm-per-prompt" else ((flag.split(".", 1)[1], int(value)),)
        limits = tuple({**dict(settings.mm_limits), **dict(named)}.items()) if flag != "--limit-mm-per-prompt" \
            else named
        return replace(settings, mm_limits=limits, language_model_only=settings.language_model_only or _no_media(limits))
    if flag == "--speculative-config":
        return _speculative(settings, value)
    return settings


def launch_settings(argv: Sequence[str]) -> LaunchSettings:
    """The memory-relevant options of a vLLM launch (read by the one vLLM argv reader); others are ignored."""
    settings = LaunchSettings()
    for option in parse_vllm_argv(argv, strict=False).options:
        try:
            settings = _apply(settings, option)
        except ValueError:
            raise LaunchArgsError(f"{option.given}: cannot read value {option.value!r}") from None
    return settings

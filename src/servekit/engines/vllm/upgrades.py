"""vLLM's upgrade table: what replaced an option that a release stopped parsing, and the changes of
default behaviour that no option shows. Each entry names the public page it is read from; the
stored catalogs decide *when* an option stops parsing wherever they cover the releases (an entry
with ``release=None`` only explains).
"""

from __future__ import annotations

from servekit.engines.common.upgrade_table import (
    MOVED,
    REMOVED,
    RENAMED,
    DefaultChange,
    KeyChange,
    OptionChange,
    UpgradeTable,
)

_POOLING = ("--runner", "pooling")

OPTIONS = (
    OptionChange("--enable-reasoning", REMOVED, "0.10.0", "https://github.com/vllm-project/vllm/issues/18538",
                 why="reasoning is on whenever --reasoning-parser names a parser", noop=True),
    OptionChange("--device", REMOVED, "0.10.0", "https://github.com/vllm-project/vllm/pull/21349",
                 why="it had no effect: the platform is detected, CUDA_VISIBLE_DEVICES picks the GPUs", noop=True),
    OptionChange("--num-scheduler-steps", REMOVED, None, "https://github.com/vllm-project/vllm/pull/22779",
                 why="multi-step scheduling belonged to the V0 engine; V1 has none"),
    OptionChange("--multi-step-stream-outputs", REMOVED, None, "https://github.com/vllm-project/vllm/pull/22779",
                 why="multi-step scheduling belonged to the V0 engine", noop=True),
    OptionChange("--swap-space", REMOVED, "0.18.0", "https://github.com/unslothai/unsloth-zoo/issues/1210",
                 why="the V1 engine preempts by recomputing and never swaps KV blocks to CPU memory", noop=True),
    OptionChange("--use-v2-block-manager", REMOVED, None, "https://github.com/vllm-project/vllm/pull/8704",
                 why="block manager v2 became the only one", noop=True),
    OptionChange("--task", RENAMED, None, "https://github.com/vllm-project/vllm/pull/21470",
                 why="--runner picks generate or pooling; add --convert embed|classify|reward to adapt a "
                     "generative checkpoint",
                 values={"auto": (), "generate": ("--runner", "generate"), "transcription": ("--runner", "generate"),
                         "draft": ("--runner", "draft"), "embed": _POOLING, "embedding": _POOLING,
                         "classify": _POOLING, "score": _POOLING, "reward": _POOLING}),
    OptionChange("--worker-use-ray", RENAMED, None, "https://github.com/vllm-project/vllm/issues/5944",
                 words=("--distributed-executor-backend", "ray")),
    OptionChange("--guided-decoding-backend", MOVED, "0.12.0", "https://github.com/vllm-project/vllm/pull/22772",
                 into="--structured-outputs-config", key="backend",
                 why="deprecated in 0.11 ('will be removed in v0.12.0', its help says)"),
    OptionChange("--speculative-model", MOVED, None, "https://github.com/vllm-project/vllm/pull/36333",
                 into="--speculative-config", key="model"),
    OptionChange("--num-speculative-tokens", MOVED, None, "https://github.com/vllm-project/vllm/pull/36333",
                 into="--speculative-config", key="num_speculative_tokens"),
    OptionChange("--rope-scaling", MOVED, None, "https://github.com/vllm-project/vllm/pull/28006",
                 into="--hf-overrides", key="rope_scaling", json_value=True),
    OptionChange("--rope-theta", MOVED, None, "https://github.com/vllm-project/vllm/pull/28006",
                 into="--hf-overrides", key="rope_theta"),
)

KEYS = (
    KeyChange("--compilation-config", "level", None, "https://github.com/vllm-project/vllm/pull/26355",
              new="mode", why="compilation level was renamed compilation mode"),
)

DEFAULTS = (
    DefaultChange(
        "v1-engine", "0.8.0",
        "the V1 engine runs by default (CUDA): prefix caching and chunked prefill are on, the scheduler's "
        "batched-token and sequence limits change, and KV memory is planned differently",
        "https://github.com/vllm-project/vllm/releases/tag/v0.8.0",
        keep=("VLLM_USE_V1=0",), unless=("VLLM_USE_V1",), env_only=True),
    DefaultChange(
        "prefix-caching", "0.8.0",
        "automatic prefix caching is on by default with the V1 engine",
        "https://github.com/vllm-project/vllm/releases/tag/v0.8.0",
        keep=("--no-enable-prefix-caching",),
        unless=("--enable-prefix-caching", "--no-enable-prefix-caching", "--disable-prefix-caching", "VLLM_USE_V1=0"),
        severity="note"),
    DefaultChange(
        "v0-removed", "0.11.0",
        "the V0 engine is gone: VLLM_USE_V1=0 no longer selects it, V1 runs whatever the variable says",
        "https://github.com/vllm-project/vllm/releases/tag/v0.11.0",
        when=("VLLM_USE_V1=0",)),
)

TABLE = UpgradeTable(options=OPTIONS, keys=KEYS, defaults=DEFAULTS)

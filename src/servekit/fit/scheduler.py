"""The scheduler limits a vLLM launch ran with, as the engine sets them when the command does not:
``max_num_seqs``, ``max_num_batched_tokens``, and the tokens the start-up profile runs over.

V1 (``vllm/engine/arg_utils.py``, the defaults of the OpenAI server) picks both from the device,
by a rule that changed between releases (``v1_batch_defaults`` in ``servekit.fit.versions``):

* before 0.8.4: 8192 batched tokens on devices named H100/H200, else 2048; 1024 sequences;
* 0.8.4: 1024 sequences only on H100/H200, 256 elsewhere;
* 0.8.5: any device of at least 70 GiB gets 8192 / 1024;
* 0.9: ... except devices named A100;
* 0.28: devices of at least 160 GiB get 16384 batched tokens;
* on the CPU platform (vLLM CPU 0.32.0, ``EngineArgs.get_batch_defaults``, "cpu specific default
  values"): 2048 batched tokens and 128 sequences per rank of the world (TP x PP) for the server.

Without chunked prefill V1 raises the batched tokens to ``max_model_len``. The profile's dummy
forward pass runs over the batched tokens, its dummy sampler over ``max_num_seqs`` rows.

V0 (``vllm/config.py`` ``SchedulerConfig.__post_init__`` and ``EngineArgs._set_default_args_v0``)
keeps 256 sequences; it turns chunked prefill on by default only for contexts above 32,768 tokens
on CUDA (not ROCm), without sliding-window layers, speculative decoding, MLA, multimodal inputs
or recurrent layers; then the batched tokens are 2048, otherwise ``max(max_model_len, 2048)``
(at least 5120 for multimodal models). ``profile_run`` runs ``max_num_seqs`` dummy sequences
that together hold the batched tokens.

The LLM() class defaults differ (16384 / 8192 tokens): plans describe servers; a kv-points line
says ``"entrypoint": "offline"`` for an ``LLM()`` run (``LaunchSettings.offline``).
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.constants import value
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.versions import VllmRun
from servekit.records import record

DEFAULT_MAX_MODEL_LEN = 4096
V0_MAX_NUM_SEQS = 256
V0_BATCHED_TOKENS = 2048
V0_MULTIMODAL_BATCHED_TOKENS = 5120
V0_LONG_CONTEXT = 32768
NAMED_LARGE = ("h100", "h200")
CPU_SERVER_DEFAULTS = (2048, 128)
"""(batched tokens, sequences) per rank the OpenAI server takes on the CPU platform (the ``LLM()``
class: 4096 / 256)."""
OFFLINE_TOKEN_FACTOR = {True: 2, False: 4}
"""How many times the server's batched tokens the ``LLM()`` class defaults to, on large devices and
on the rest (vllm/engine/arg_utils.py: LLM_CLASS 16384 / 8192 against OPENAI_API_SERVER 8192 / 2048)."""


@record
class SchedulerLimits:
    """The scheduler's sequence and batched-token limits that a launch runs with."""

    max_num_seqs: int
    max_num_batched_tokens: int

    @property
    def profile_tokens(self) -> int:
        """Tokens of the start-up profile's dummy forward pass."""
        return self.max_num_batched_tokens


def effective_max_model_len(facts: ModelFacts, launch: LaunchSettings) -> int:
    return launch.max_model_len or facts.max_position_embeddings or DEFAULT_MAX_MODEL_LEN


def v1_defaults(device: Device, run: VllmRun, offline: bool = False, world_size: int = 1) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) the V1 OpenAI server picks for this device; the
    ``LLM()`` class (``offline``) takes 16384 / 8192 tokens where the server takes 8192 / 2048
    (``UsageContext.LLM_CLASS`` in the same tables). On the CPU platform both scale with the
    ranks of the world (``world_size``: TP x PP)."""
    if run.platform == "cpu":
        tokens, seqs = CPU_SERVER_DEFAULTS
        return tokens * world_size * (2 if offline else 1), seqs * world_size * (2 if offline else 1)
    scheme = run.rule("v1_batch_defaults")
    gib, name = device.memory_gib, device.name.lower()
    if scheme == "memory_70_160" and gib >= value("huge_device_gib"):
        return 16384, 1024
    if scheme.startswith("h100_names"):
        large = any(word in name for word in NAMED_LARGE)
        seqs = 1024 if large or scheme == "h100_names_1024" else 256
    else:
        large = gib >= value("large_device_gib") and (scheme == "memory_70" or "a100" not in name)
        seqs = 1024 if large else 256
    tokens = (8192 if large else 2048) * (OFFLINE_TOKEN_FACTOR[large] if offline else 1)
    return tokens, seqs


def v0_chunked_prefill(facts: ModelFacts, launch: LaunchSettings, run: VllmRun) -> bool:
    """Whether V0 runs with chunked prefill: as the command says, else its long-context default."""
    if launch.chunked_prefill is not None:
        return launch.chunked_prefill
    layers = set(facts.layers)
    excluded = bool(layers & {"sliding", "mla", "linear"}) or facts.has_vision or bool(launch.spec_method)
    return effective_max_model_len(facts, launch) > V0_LONG_CONTEXT and run.platform == "cuda" and not excluded


def scheduler_limits(facts: ModelFacts, launch: LaunchSettings, device: Device, run: VllmRun) -> SchedulerLimits:
    """The limits the launch ran with: the command's, else the engine's defaults."""
    mml = effective_max_model_len(facts, launch)
    if run.v0:
        batched = launch.max_num_batched_tokens
        if batched is None:
            chunked = v0_chunked_prefill(facts, launch, run)
            batched = V0_BATCHED_TOKENS if chunked else max(mml, V0_BATCHED_TOKENS)
            if facts.has_vision:
                batched = max(batched, V0_MULTIMODAL_BATCHED_TOKENS)
        return SchedulerLimits(launch.max_num_seqs or V0_MAX_NUM_SEQS, batched)
    tokens, seqs = v1_defaults(device, run, launch.offline)
    batched = launch.max_num_batched_tokens
    if batched is None:
        batched = max(mml, tokens) if launch.chunked_prefill is False else tokens
    return SchedulerLimits(launch.max_num_seqs or seqs, batched)

"""Predict measured KV pools: one line of the kv-points schema -> the planner's figures.

A kv-points line describes a real launch and what its start-up log said. Only structured fields
are read, each in the one form ``servekit.fit.point_fields`` checks (anything else is a
``PointError`` naming the field); free text such as ``notes``, ``source``, ``config_source``,
``gpu``, ``weights_dtype`` or a description in ``config_facts`` never is:

* ``config_facts``: a subset of config.json keys (``vocab_size``, ``intermediate_size``,
  ``hidden_size``, ``torch_dtype``, MLA's ``q_lora_rank``, MoE's ``num_experts`` /
  ``n_routed_experts``, ``num_experts_per_tok``, ``moe_intermediate_size``,
  ``first_k_dense_replace`` ... when known), plus ``mla``, ``multimodal`` (true: the checkpoint
  holds a vision tower), the layer counts of hybrid stacks (``attention_layers`` per kind, or
  ``linear_attention_layers`` / ``sliding_layers`` / ``global_layers``) and ``draft_layers``
  (decoder layers of a separate draft network, whose KV shares the pool);
* ``gpu_model`` (an id of the device table; ``servekit.fit.point_device``), ``gpu_mem_gib``
  (total memory of one device as the engine sees it; without it the table's figure for
  ``gpu_model``), ``interconnect``, ``tp``, ``pp``, ``gpu_memory_utilization``,
  ``max_model_len``, ``kv_cache_dtype``, ``enforce_eager``;
* ``vllm_version`` (a release, a development build, or an approximate release, reported as such
  in the output's ``version``; absent: the newest rules) and ``engine`` (``v0`` / ``v1``);
* ``extra_flags``: vLLM arguments; an entry ``NAME=VALUE`` is an environment variable;
* ``env`` (optional): environment variables of the launch, e.g. ``{"VLLM_CPU_KVCACHE_SPACE": "8"}``;
  ``VLLM_USE_V1`` and ``VLLM_USE_FLASHINFER_SAMPLER`` select the engine's accounting
  (``servekit.fit.versions.VllmRun``);
* ``weights_gib``: checkpoint size (split over TP x PP, but for the tensors every TP rank holds
  whole: ``servekit.fit.sharding``), less the parts vLLM does not load: the
  vision tower with ``--language-model-only`` and the MTP head unless it drafts, each estimated
  from ``config_facts`` (``config_facts.vision_config`` or the assumed tower for the first);
  ``weights_gib_per_rank`` (optional) the logged ``Model loading took`` figure, which wins when
  present; with neither, weights are estimated from ``config_facts``, the linears priced by the
  line's ``quantization`` (bytes per weight with its scales, ``servekit.facts.quant_bytes``) when
  ``config_facts`` has no ``quantization_config``, and the output says so (``weights_estimated``,
  ``weights_basis``);
* ``quantization``: the number format and bits of the quantized linears, with the FP8 scale
  block when block-scaled and an int format's ``group_size`` when stated (a
  ``quantization_config`` in ``config_facts`` wins). The format matters where a GPU without FP8
  re-lays the scales (``servekit.fit.marlin``) and where the weights are estimated;
* ``entrypoint`` (optional): ``server`` (the default, ``vllm serve``) or ``offline`` (an ``LLM()``
  run, whose scheduler defaults batch more tokens: ``servekit.fit.scheduler``);
* ``available_kv_gib_per_gpu``: the logged available KV memory, when the log has it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.facts.config import (
    indexer_of,
    layer_kinds,
    mla_from_config,
    mlp_projections,
    quant_from_config,
    split_blocks,
)
from servekit.facts.estimate import estimated_weight_bytes
from servekit.facts.moe_config import moe_from_config
from servekit.facts.linear import bailing_group, kda_layers, linear_from_config
from servekit.facts.model import LayerKind, ModelFacts, QuantFacts
from servekit.facts.quant_bytes import QuantFormat, format_from_point
from servekit.facts.vision import vision_from_config, vision_params
from servekit.fit.constants import value
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.encoder import tower
from servekit.fit.launch import LaunchArgsError, LaunchSettings, launch_settings
from servekit.fit.planner import FitRequest, plan_fit
from servekit.fit.point_device import point_device
from servekit.fit.point_fields import ENV_ENTRY, PointError, flag_argv, normalized_point, readable_point
from servekit.fit.sharding import GIB, per_rank_bytes
from servekit.fit.versions import VllmRun, read_version, series_readings, unsettled_rules

ASSUMED_KV_HEADS = 8
ASSUMED_HEAD_DIM = 128
ASSUMED_MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64}
"""MLA sizes a line marks ``mla`` (or gives ``kv_lora_rank``) without stating: DeepSeek-V2's and
DeepSeek-V3's config.json (and every checkpoint of their architecture, e.g. Kimi-K2): a stated
assumption, flagged in the output's ``assumed``."""
ASSUMED_GATED_DELTANET = {"linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
                          "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}
"""Gated DeltaNet sizes a line with linear-attention layers (or some ``linear_*`` keys) does not
state: the defaults of transformers' ``Qwen3NextConfig`` (a stated assumption, flagged)."""
MAMBA_KEYS = ("mamba_num_heads", "mamba_n_heads", "mamba_expand", "conv_L_cache", "attn_type_list")
"""Keys of the other constant-state families (``servekit.facts.linear``): no Gated DeltaNet is assumed."""


def _every(n: int, special: int) -> int:
    return max(1, round(n / max(1, special)))


def _layers(cf: dict[str, Any]) -> list[LayerKind]:
    """Layer kinds from a point's facts: config keys first, then the layer counts points give."""
    n = int(cf["num_hidden_layers"])
    if kda_layers(cf) or bailing_group(cf):
        return layer_kinds(cf, n, "config_facts")
    if cf.get("mla") or cf.get("kv_lora_rank"):
        return ["mla"] * n
    if any(cf.get(k) for k in ("layer_types", "layers_block_type", "hybrid_override_pattern", "full_attention_interval",
                               "sliding_window_pattern")):
        return layer_kinds(cf, n, "config_facts")
    if cf.get("attention_layers"):
        counts = cf["attention_layers"]
        every = _every(n, counts.get("full", 0))
        other = "linear" if counts.get("linear") else "sliding"
        return ["full" if (i + 1) % every == 0 else other for i in range(n)] if counts.get("full") else [other] * n
    if cf.get("linear_attention_layers"):
        every = _every(n, n - int(cf["linear_attention_layers"]))
        return ["full" if (i + 1) % every == 0 else "linear" for i in range(n)]
    if cf.get("sliding_layers") or cf.get("global_layers"):
        sliding = int(cf.get("sliding_layers") or n - int(cf["global_layers"]))
        every = _every(n, n - sliding)
        return ["full" if (i + 1) % every == 0 else "sliding" for i in range(n)]
    if cf.get("sliding_window") and cf.get("use_sliding_window", True):
        return ["sliding"] * n
    return ["full"] * n


def _filled(cf: dict[str, Any], defaults: dict[str, int], what: str, assumed: list[str]) -> dict[str, Any]:
    """``cf`` with the keys of ``defaults`` it lacks set to them, each one named in ``assumed``."""
    missing = {k: v for k, v in defaults.items() if cf.get(k) is None}
    if missing:
        assumed.append(f"{what}: " + ", ".join(f"{k}={v}" for k, v in missing.items()))
    return {**cf, **missing}


def _with_assumed_sizes(cf: dict[str, Any], assumed: list[str]) -> dict[str, Any]:
    """``cf`` with the sizes an MLA or Gated DeltaNet stack needs and the line leaves out filled
    by the stated assumptions (``ASSUMED_MLA``, ``ASSUMED_GATED_DELTANET``)."""
    if cf.get("mla") or cf.get("kv_lora_rank"):
        return _filled({**cf, "mla": True}, ASSUMED_MLA, "MLA sizes not stated (DeepSeek-V3's)", assumed)
    if any(cf.get(k) is not None for k in MAMBA_KEYS):
        return cf
    partial = any(cf.get(k) is not None for k in ASSUMED_GATED_DELTANET)
    if partial or "linear" in _layers(cf):
        return _filled(cf, ASSUMED_GATED_DELTANET, "Gated DeltaNet sizes not stated (Qwen3NextConfig's defaults)",
                       assumed)
    return cf


def facts_from_point(cf: dict[str, Any]) -> tuple[ModelFacts, list[str]]:
    """Model facts from a point's ``config_facts``; the second value lists assumptions made."""
    assumed: list[str] = []
    cf = _with_assumed_sizes(cf, assumed)
    kv_heads = cf.get("num_key_value_heads")
    head_dim = cf.get("head_dim")
    if (kv_heads is None or head_dim is None) and not cf.get("mla"):
        assumed.append(f"num_key_value_heads={ASSUMED_KV_HEADS}, head_dim={ASSUMED_HEAD_DIM}")
    kv_heads, head_dim = kv_heads or ASSUMED_KV_HEADS, head_dim or ASSUMED_HEAD_DIM
    heads = cf.get("num_attention_heads") or kv_heads
    # read as config.json is read: a recurrent state in mamba_ssm_dtype when the config states it
    # (the Qwen3.5 family does), else in the model dtype (Qwen3-Next): servekit.facts.linear
    linear = linear_from_config(cf, int(heads), int(head_dim))
    mla = mla_from_config(cf) if cf.get("mla") else None
    architectures = cf.get("architectures")
    facts = ModelFacts(
        source="kv-points config_facts",
        architecture=architectures[0] if isinstance(architectures, list) and architectures else cf.get("architecture"),
        hidden_size=cf.get("hidden_size"),
        intermediate_size=cf.get("intermediate_size"),
        vocab_size=cf.get("vocab_size"),
        tied_embeddings=bool(cf.get("tie_word_embeddings")),
        num_attention_heads=int(heads),
        num_kv_heads=int(kv_heads),
        head_dim=int(head_dim),
        layers=tuple(_layers(cf)),
        kv_shared_layers=int(cf.get("num_kv_shared_layers") or 0),
        full_head_dim=cf.get("global_head_dim"),
        full_kv_heads=cf.get("num_global_key_value_heads"),
        sliding_window=cf.get("sliding_window"),
        linear=linear,
        mla=mla,
        indexer=indexer_of(cf, mla is not None),
        split_blocks=split_blocks(cf),
        mlp_projections=mlp_projections(cf),
        mtp_layers=int(cf.get("mtp_num_hidden_layers") or 0),
        has_vision=cf.get("multimodal") is True or bool(cf.get("vision_config")),
        vision=vision_from_config(cf),
        moe=moe_from_config(cf),
        dtype=str(cf.get("torch_dtype") or cf.get("dtype") or "bfloat16"),
    )
    return facts, assumed


def quant_from_point(point: dict[str, Any]) -> QuantFacts | None:
    """The checkpoint's quantization: ``config_facts.quantization_config``, else the line's
    structured ``quantization`` (its format and, for block-scaled FP8, its scale block), else None."""
    stated = quant_from_config(dict(point.get("config_facts") or {}))
    if stated is not None:
        return stated
    quant = point.get("quantization")
    if not quant:
        return None
    block = quant.get("weight_block_size")
    return QuantFacts(method=quant["method"], weight_block_size=tuple(block) if block else None)


def stated_format(point: dict[str, Any]) -> QuantFormat | None:
    """The line's structured ``quantization`` as a storage format, when ``config_facts`` carries no
    ``quantization_config`` of its own (which then prices the weights): how an estimate of the
    checkpoint's bytes prices its linears (``servekit.facts.quant_bytes``)."""
    if quant_from_config(dict(point.get("config_facts") or {})) is not None or not point.get("quantization"):
        return None
    return format_from_point(point["quantization"])


def point_env(point: dict[str, Any]) -> dict[str, str]:
    """Environment of the launch: ``env`` plus ``NAME=VALUE`` entries of ``extra_flags``."""
    env = {str(k): str(v) for k, v in (point.get("env") or {}).items()}
    for flag in point.get("extra_flags") or []:
        match = ENV_ENTRY.match(str(flag).strip())
        if match:
            env.setdefault(match.group(1), match.group(2))
    return env


def _draft_layers(point: dict[str, Any]) -> int | None:
    """``config_facts.draft_layers``: decoder layers of the launch's draft network, when stated."""
    stated = (point.get("config_facts") or {}).get("draft_layers")
    return int(stated) if isinstance(stated, int | float) and not isinstance(stated, bool) else None


def launch_from_point(point: dict[str, Any]) -> LaunchSettings:
    try:
        launch = launch_settings(flag_argv(list(point.get("extra_flags") or [])))
    except LaunchArgsError as exc:
        raise PointError(f"extra_flags: {exc.message}", fix=exc.fix) from None
    kv = point.get("kv_cache_dtype") or "auto"
    return replace(
        launch,
        tp=int(point.get("tp") or launch.tp or 1),
        pp=int(point.get("pp") or launch.pp or 1),
        block_size=point.get("block_size") or launch.block_size,
        max_model_len=point.get("max_model_len") or launch.max_model_len,
        kv_cache_dtype=kv,
        gpu_memory_utilization=point.get("gpu_memory_utilization") or launch.gpu_memory_utilization,
        enforce_eager=bool(point.get("enforce_eager")) or launch.enforce_eager,
        offline=point.get("entrypoint") == "offline",
        draft_layers=_draft_layers(point),
    )


def tower_bytes(facts: ModelFacts) -> float:
    """Estimated bytes of the vision tower (its own or the assumed one) at the model's dtype."""
    vision = tower(facts)
    if vision is None:
        return 0.0
    hidden = facts.hidden_size or facts.num_attention_heads * facts.head_dim
    return vision_params(vision, hidden) * dtype_bytes(facts.dtype)


def unloaded_bytes(config_facts: dict[str, Any], facts: ModelFacts, launch: LaunchSettings) -> float:
    """Estimated checkpoint bytes vLLM leaves on disk for this launch: the vision tower when no
    media is allowed (the tower is never built) and the MTP head unless it drafts (the
    ``mtp.`` weights are skipped), e.g. ``vllm/model_executor/models/qwen3_5.py``."""
    unloaded = tower_bytes(facts) if launch.language_model_only else 0.0
    if facts.mtp_layers and not launch.uses_mtp:
        unloaded += estimated_weight_bytes(config_facts, facts).mtp
    return unloaded


def weights_per_rank_from_point(
    point: dict[str, Any], facts: ModelFacts | None = None, launch: LaunchSettings | None = None
) -> tuple[float | None, bool]:
    """(weights GiB per rank, estimated?): the logged per-rank figure, else the checkpoint size
    (less what the launch does not load, when ``facts`` and ``launch`` are given) over TP x PP,
    else an estimate from the config facts, the vision tower included (None without facts); an
    unstated vocabulary is priced as the sampler assumes it (``default_vocab``), so the embedding
    and the LM head are not left out."""
    if point.get("weights_gib_per_rank") is not None:
        return float(point["weights_gib_per_rank"]), False
    ranks = int(point.get("tp") or 1) * int(point.get("pp") or 1)
    config_facts = dict(point.get("config_facts") or {})
    unloaded = unloaded_bytes(config_facts, facts, launch) if facts and launch else 0.0
    if point.get("weights_gib"):
        loaded = float(point["weights_gib"]) * GIB - unloaded
        return (per_rank_bytes(loaded, facts, launch) if facts and launch else loaded / ranks) / GIB, False
    if facts is None:
        return None, False
    sized = facts if facts.vocab_size else replace(facts, vocab_size=int(value("default_vocab")))
    estimate = estimated_weight_bytes(config_facts, sized, stated_format(point))
    loaded = estimate.total - estimate.vision + tower_bytes(facts) - unloaded
    return (per_rank_bytes(loaded, facts, launch) if launch else loaded / ranks) / GIB, True


def version_read(point: dict[str, Any]) -> dict[str, Any]:
    """How the line's ``vllm_version`` was read: the release whose rules apply, its form, and
    whether it is only approximate (no version: the newest rules); an approximate one also lists
    the rules that change inside the series it names (``unsettled``: the prediction applies them
    as of the version as written, which may not be the release that ran) and the releases that
    stand for each set of them (``readings``, the version as written first)."""
    text = point.get("vllm_version")
    if text is None:
        return {"read_as": None, "form": "not stated: the newest release's rules", "approximate": False}
    found = read_version(text)
    out: dict[str, Any] = {"read_as": str(found.version), "form": found.form, "approximate": found.approximate}
    if found.approximate:
        out["unsettled"] = list(unsettled_rules(found))
        if readings := series_readings(found):
            out["readings"] = list(readings)
    return out


def _check_engine(point: dict[str, Any]) -> None:
    """A line may state the V0 engine only for a release that still had it (before 0.11)."""
    if point.get("engine") == "v0" and point.get("vllm_version") is not None:
        if VllmRun(point["vllm_version"], engine="v0").rule("v1_default") == "only":
            raise PointError(f"engine: v0 with vllm_version {point['vllm_version']}: the V0 engine was removed in 0.11",
                             fix="write engine: v1, or the release that ran V0")


def _read(point: dict[str, Any], set_aside: bool) -> tuple[dict[str, Any], list[str]]:
    """The line as the prediction reads it, and the notes of what was set aside (``set_aside``:
    ``servekit.fit.point_fields.readable_point``; otherwise a field the reader cannot read is a
    ``PointError``)."""
    if not set_aside:
        point = normalized_point(point)
        _check_engine(point)
        return point, []
    point, notes = readable_point(point)
    try:
        _check_engine(point)
    except PointError as exc:
        point = {k: v for k, v in point.items() if k != "engine"}
        notes.append(f"engine set aside ({exc.message}); read as the release's default engine")
    return point, notes


def predict_point(point: dict[str, Any], *, use_logged_memory: bool = True,
                  set_aside_unreadable: bool = False, engine: str | None = None) -> dict[str, Any]:
    """``{kv_tokens, kv_bytes_per_token, weights_gib_per_rank}`` for one kv-points line; without
    ``use_logged_memory`` the logged available KV memory is ignored (the whole memory model).
    kv-points lines are vLLM launches; ``engine`` plans the same line with another engine's memory
    rule (SGLang for a perf line of SGLang; its release from ``engine_version``).

    A field the reader cannot read is a ``PointError`` naming it; with ``set_aside_unreadable``
    it is set aside instead (read as unstated) and named in the output's ``set_aside``, so every
    line with its device memory and layer count gets a figure, flagged where it rests on less
    than the line wrote."""
    point, set_aside = _read(point, set_aside_unreadable)
    if "config_facts" not in point:
        raise PointError("kv-points line has no config_facts")
    if not isinstance(point["config_facts"], dict):
        raise PointError("config_facts must be a JSON object of config.json keys")
    if not point["config_facts"].get("num_hidden_layers"):
        raise PointError("config_facts lacks 'num_hidden_layers'", fix="state the model's decoder layer count")
    facts, assumed = facts_from_point(point["config_facts"])
    facts = replace(facts, quantization=quant_from_point(point))
    launch = launch_from_point(point)
    env = point_env(point)
    weights, estimated = weights_per_rank_from_point(point, facts, launch)
    available = point.get("available_kv_gib_per_gpu") if use_logged_memory else None
    device, line_engine, cpu_space = point_device(point, env, launch.tp)
    engine = engine or line_engine

    def fit_at(version: str | None):
        return plan_fit(FitRequest(
            facts=facts, device=device, launch=launch, engine=engine, cpu_kvcache_space_gib=cpu_space,
            available_kv_gib=available, weights_gib_per_rank=weights if weights is not None else 0.0,
            weights_as_loaded=point.get("weights_gib_per_rank") is not None,
            engine_version=version, engine_env=env, engine_generation=point.get("engine"),
        ))

    report = fit_at(point.get("engine_version") if engine != line_engine else point.get("vllm_version"))
    out: dict[str, Any] = {"kv_tokens": None, "kv_bytes_per_token": report.kv_bytes_per_token,
                           "weights_gib_per_rank": weights, "version": version_read(point)}
    if available is not None or cpu_space is not None or (device.memory_gib and weights is not None):
        out["kv_tokens"] = report.kv_tokens
        out["available_kv_gib"] = round(report.available_kv_gib, 4)
        readings = out["version"].get("readings")
        if readings:  # an approximate version: the pool under each set of rules its series holds
            out["version"]["kv_tokens_by_reading"] = {
                release: report.kv_tokens if i == 0 else fit_at(release).kv_tokens
                for i, release in enumerate(readings)}
    if estimated:
        out["weights_estimated"] = True
        stated = stated_format(point)
        out["weights_basis"] = f"estimated from config_facts, linears as {stated.label}" if stated else \
            "estimated from config_facts"
    if device.profile.memory_source.startswith("assumed"):
        assumed.append(f"device memory {device.memory_gib:g} GiB: {device.profile.memory_source}")
    if assumed:
        out["assumed"] = assumed
    if set_aside:
        out["set_aside"] = set_aside
    return out

"""``servekit perf`` as functions of plain values: a planned launch or a points file -> predictions.

A model's launch is the one ``servekit fit`` checks (``servekit.app.fit.run_fit``: the plan's
layout, variant and argv with the user's options); the speed model reads its KV pool, TP x PP,
weight bytes and KV bytes per token from that check, the model's shape from its facts, and the
device from the hardware profile. A launch fit refuses gets no prediction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from servekit.app.checks import known_facts
from servekit.app.fit import FitOptions, run_fit
from servekit.app.local_hardware import with_local
from servekit.app.request import load_documents
from servekit.errors import SelectionError, ServekitError
from servekit.facts.model import ModelFacts
from servekit.facts.resolve import resolve_model
from servekit.fit.api import precision_of
from servekit.fit.launch import LaunchArgsError, LaunchSettings, launch_settings
from servekit.fit.planner import FitReport
from servekit.fit.sharding import GIB
from servekit.hardware import HardwareProfile, profiles_for
from servekit.jsonl import numbered_objects
from servekit.perf.constants import acceptance
from servekit.perf.intervals import INTERVAL80, METRICS, interval80_for, interval_source, ratios_for
from servekit.perf.launch import (
    default_limits, offline_occupancy, overhead_key, overlaps_host_work, rates_for, shares_source,
)
from servekit.perf.points import launch_of, normal_point, output_line, workload_of
from servekit.perf.predict import Limits, NoRoom, PerfLaunch, Prediction, Spec, Workload, predict
from servekit.perf.shape import FORMAT_BYTES, ModelShape, expert_params, mla_decode_width, untied_embedding_params
from servekit.perf.terms import Layout
from servekit.records import record


@dataclass
class PerfOptions:
    fit: FitOptions
    workload: Workload
    max_num_batched_tokens: int | None = None
    acceptance_rate: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def predict_perf_points(lines: Iterable[str | bytes], catalog: str | None = None) -> Iterator[dict[str, Any]]:
    """One output object per perf-points line, in order; a bad line yields ``{"error": ...}``."""
    profiles = profiles_for(load_documents(catalog).taxonomy)
    for number, point, error in numbered_objects(lines):
        if point is None:
            yield {"error": error}
            continue
        try:
            point = normal_point(point)
            yield output_line(point, predict(launch_of(point, profiles), workload_of(point)), INTERVAL80)
        except KeyError as exc:
            yield {"error": f"line {number}: lacks {exc.args[0]!r}"}
        except NoRoom as exc:
            yield {"error": f"line {number}: {exc}"}
        except (ServekitError, TypeError, ValueError) as exc:
            yield {"error": f"line {number}: {exc}"}


def weights_format(facts: ModelFacts, precision: str | None) -> str:
    """The checkpoint's number format as the speed model names it (``shape.FORMAT_BYTES``)."""
    fmt = (precision_of(facts, precision) or "bf16").lower()
    return fmt if fmt in FORMAT_BYTES else ("fp8" if "fp8" in fmt else "bf16")


def model_shape(facts: ModelFacts, report: FitReport, fmt: str) -> ModelShape:
    """The model's shape from its facts and its fit report (weight and KV bytes per rank)."""
    hidden = facts.hidden_size or facts.num_attention_heads * facts.head_dim
    moe = facts.moe
    routed = modal = 0.0
    if moe is not None:
        inner = moe.moe_intermediate_size or facts.intermediate_size or 0
        width_in = facts.expert_width or hidden
        routed = expert_params(facts.expert_layers(), width_in, moe.num_experts, inner, matrices=facts.mlp_projections)
        modal = sum(expert_params(facts.expert_layers(), width_in, n, width, matrices=facts.mlp_projections)
                    for n, width in moe.modal_experts)
    weight_bytes = facts.weights.language if facts.weights else report.weights_gib_per_rank * GIB * report.tp * report.pp
    total = weight_bytes / FORMAT_BYTES[fmt]
    routed = min(routed, total)
    modal = min(modal, total - routed)
    per_token = (moe.experts_per_token or 1) if moe else 0
    active = total - routed * (1 - per_token / moe.num_experts) - modal if moe else total
    return ModelShape(params_total=total, params_active=active, expert_params=routed,
                      experts=moe.num_experts if moe else 0, experts_per_token=per_token, layers=facts.num_layers,
                      hidden=hidden, heads=facts.num_attention_heads, attention_dim=2 * facts.head_dim,
                      kv_bytes_per_token=report.kv_bytes_per_token, weights_format=fmt,
                      decode_attention_dim=mla_decode_width(facts.mla.kv_lora_rank, facts.mla.qk_rope_head_dim)
                      if facts.mla else 0, vocab=facts.vocab_size or 0,
                      embedding_params=untied_embedding_params(facts.vocab_size or 0, hidden, facts.tied_embeddings),
                      unread_params=modal)


def _facts(opts: FitOptions, context: dict[str, Any]) -> tuple[ModelFacts, str | None]:
    docs = load_documents(opts.catalog)
    facts = known_facts(context["checkpoint"]) if context.get("checkpoint") else None
    if facts is None:
        facts = resolve_model(opts.model, variant=context.get("variant"), recipes=docs.recipes).facts
    recipe = docs.recipes.get(context.get("recipe") or "") or {}
    variant = ((recipe.get("variants") or {}).get(context.get("variant") or "default") or {})
    return facts, variant.get("precision")


def _settings(argv: list[str]) -> LaunchSettings:
    try:
        return launch_settings(argv)
    except LaunchArgsError:
        return LaunchSettings()


def _spec(launch: LaunchSettings, rate: float | None) -> Spec | None:
    if not launch.spec_method or not launch.spec_tokens:
        return None
    return Spec(launch.spec_method, launch.spec_tokens, rate if rate is not None else acceptance(launch.spec_method))


def layout_of(report: FitReport, launch: LaunchSettings) -> tuple[Layout, int]:
    """(TP x PP layout, DP replicas) of the launch; with ``--enable-expert-parallel`` the replicas
    share one set of experts."""
    dp = max(1, launch.dp or 1)
    return Layout(report.tp, report.pp, expert_replicas=dp if launch.expert_parallel else 1), dp


def perf_launch(opts: PerfOptions) -> tuple[PerfLaunch, dict[str, Any]]:
    """The launch ``servekit fit`` checks for these options, as the speed model sees it."""
    check, context = run_fit(opts.fit)
    report = check.report
    if report is None or not check.fits:
        raise SelectionError(f"{opts.fit.model} on {opts.fit.hardware}: the launch does not fit ({check.verdict})",
                             fix="see `servekit fit` with the same options for the layout that fits")
    facts, precision = _facts(opts.fit, context)
    profile = profiles_for(with_local(load_documents(opts.fit.catalog), opts.fit.hardware).taxonomy)[opts.fit.hardware]
    checked = CheckedLaunch(facts, precision, report, profile, opts.fit.engine, tuple(context.get("argv") or ()),
                            nodes=opts.fit.nodes)
    launch, found = launch_of_check(checked, max_num_seqs=opts.fit.max_num_seqs,
                                    max_num_batched_tokens=opts.max_num_batched_tokens,
                                    acceptance_rate=opts.acceptance_rate)
    return launch, {**context, **found}


@record
class CheckedLaunch:
    """A launch fit has checked: the model's facts, the checkpoint's precision, the fit report,
    the hardware, the engine (and its release), the server's argv."""

    facts: ModelFacts
    precision: str | None
    report: FitReport
    profile: HardwareProfile
    engine: str
    argv: tuple[str, ...]
    version: str | None = None
    nodes: int = 1


def launch_of_check(checked: CheckedLaunch, *, max_num_seqs: int | None = None,
                    max_num_batched_tokens: int | None = None,
                    acceptance_rate: float | None = None) -> tuple[PerfLaunch, dict[str, Any]]:
    """The speed model's launch for a checked one, and what it read (the ``perf`` JSON's context
    keys). Scheduler limits: those given, else the argv's, else the engine's defaults."""
    report = checked.report
    fmt = weights_format(checked.facts, checked.precision)
    shape = model_shape(checked.facts, report, fmt)
    settings = _settings(list(checked.argv))
    spec = _spec(settings, acceptance_rate)
    seqs, tokens = default_limits(checked.engine, checked.profile, checked.version, spec is not None,
                                  report.tp * report.pp, kv_tokens=report.kv_tokens,
                                  context_len=report.max_model_len)
    limits = Limits(max_num_seqs=max_num_seqs or settings.max_num_seqs or seqs,
                    max_num_batched_tokens=max_num_batched_tokens or settings.max_num_batched_tokens or tokens,
                    kv_tokens=report.kv_tokens)
    layout, replicas = layout_of(report, settings)
    overlap = overlaps_host_work(checked.engine, checked.version, checked.profile, pp=layout.pp,
                                 spec_method=spec.method if spec else None, nodes=checked.nodes,
                                 stated=settings.async_scheduling)
    rates = rates_for(checked.profile, shape, checked.engine, ranks=layout.tp * layout.pp, overlap=overlap,
                      kv_cache_dtype=report.kv_cache_dtype)
    launch = PerfLaunch(shape, layout, rates, limits, replicas, spec, offline_occupancy(checked.engine))
    found = {"weights_format": fmt, "tp": report.tp, "pp": report.pp, "dp": replicas,
             "expert_parallel": layout.expert_replicas > 1, "kv_tokens": report.kv_tokens,
             "max_num_seqs": limits.max_num_seqs, "max_num_batched_tokens": limits.max_num_batched_tokens,
             "backend": overhead_key(checked.engine, checked.profile), "shares_source": shares_source(checked.profile),
             "host_overlap": overlap}
    return launch, found


def prediction_dict(pred: Prediction, context: dict[str, Any]) -> dict[str, Any]:
    """The ``servekit perf MODEL --format json`` object."""
    medians = {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms, "tpot_ms": pred.tpot_ms}
    p99 = {"ttft_ms": pred.ttft_p99_ms, "tpot_ms": pred.tpot_p99_ms}

    backend = context.get("backend") or ""
    table = interval80_for(backend)

    def band(key: str, value: float, stat: str | None = None) -> list[float]:
        lo, hi = ratios_for(table, key, stat)
        return [round(value * lo, 3), round(value * hi, 3)]

    return {
        **{k: context.get(k) for k in ("model", "checkpoint", "recipe", "variant", "hardware", "weights_format", "tp",
                                       "pp", "dp", "expert_parallel", "kv_tokens", "max_num_seqs",
                                       "max_num_batched_tokens", "shares_source")},
        "devices": pred.devices,
        "output_throughput_tok_s": round(pred.output_throughput_tok_s, 3),
        "output_throughput_per_device_tok_s": round(pred.per_device_tok_s, 3),
        "ttft_ms": {"median": round(pred.ttft_ms, 3), "p99": round(pred.ttft_p99_ms, 3)},
        "tpot_ms": {"median": round(pred.tpot_ms, 3), "p99": round(pred.tpot_p99_ms, 3)},
        "interval80": {
            "output_throughput_tok_s": band("output_throughput_tok_s", pred.output_throughput_tok_s),
            **{k: {"median": band(k, medians[k]), "p99": band(k, p99[k], "p99")} for k in METRICS
               if k != "output_throughput_tok_s"},
        },
        "interval80_source": interval_source(backend),
        "binding": pred.binding,
        "batch": pred.batch,
        "regime": pred.regime,
        "terms_ms": pred.terms_ms,
    }


def predicted(launch: PerfLaunch, workload: Workload, context: dict[str, Any], what: str) -> dict[str, Any]:
    """The ``servekit perf`` JSON of ``workload`` on ``launch``; ``what`` names the launch in the
    error when the KV pool cannot hold one request."""
    try:
        pred = predict(launch, workload)
    except NoRoom as exc:
        raise SelectionError(f"{what}: {exc}",
                             fix="shorten --input-len/--output-len, or plan more devices (--tp) for a larger pool")
    return {**prediction_dict(pred, context), "rates": achieved_rates(launch)}


def achieved_rates(launch: PerfLaunch) -> dict[str, float]:
    """What one device is taken to achieve (the datasheet or measured row times its fitted share):
    memory GB/s (for a measured CPU, the rate of a weight set of this model's size per rank),
    dense TFLOPS in the model's compute format, link GB/s; for a model with routed experts, the
    GB/s their weights stream at."""
    rates = launch.rates
    out = {"memory_gb_s": round(rates.memory / 1e9, 3), "tflops": round(rates.flops / 1e12, 4),
           "link_gb_s": round(rates.link / 1e9, 3)}
    if launch.shape.experts:
        out["expert_memory_gb_s"] = round((rates.expert_memory or rates.memory) / 1e9, 3)
    return out


def request_workload(input_len: int, output_len: int, concurrency: int | None = None,
                     request_rate: float | None = None, num_prompts: int = 1000) -> Workload:
    """The workload ``perf`` and ``bench`` take: every request of ``input_len`` prompt and
    ``output_len`` output tokens (``Workload.fixed_lengths``), ``concurrency`` in flight or a
    Poisson ``request_rate`` (neither: every prompt at once); a clear error for each bad value."""
    if concurrency is not None and request_rate is not None:
        raise SelectionError("--concurrency and --request-rate both given", fix="give one of them")
    for name, value in (("--input-len", input_len), ("--output-len", output_len), ("--num-prompts", num_prompts),
                        ("--concurrency", 1 if concurrency is None else concurrency)):
        if value < 1:
            raise SelectionError(f"{name} {value} must be at least 1")
    if request_rate is not None and request_rate <= 0:
        raise SelectionError(f"--request-rate {request_rate} must be above 0")
    return Workload(input_len, output_len, concurrency, request_rate, num_prompts, fixed_lengths=True)


def run_perf(opts: PerfOptions) -> dict[str, Any]:
    """``servekit perf MODEL``'s object: the prediction for the launch ``fit`` checks at the workload."""
    if opts.acceptance_rate is not None and not 0 <= opts.acceptance_rate <= 1:
        raise SelectionError(f"--acceptance-rate {opts.acceptance_rate} must lie between 0 and 1")
    launch, context = perf_launch(opts)
    return predicted(launch, opts.workload, context, f"{opts.fit.model} on {opts.fit.hardware}")

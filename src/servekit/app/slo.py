"""``servekit plan MODEL --slo ttft_ms=500,tpot_ms=50 --workload 1024:1024:64``: the layout that
meets a latency target with the fewest devices.

Candidates are every variant of the recipe that runs on the hardware (its precision and the
recipe's hardware lists, as a plan checks them) at every parallel layout of its offered strategies on
the hardware (``servekit.synthesis.layouts.parallel_layouts``: TP sizes, whole-node DP/EP
strategies, multi-node counts), fewest devices first, then the recipe's variant order. Each is
judged by ``servekit perf``'s own path (``servekit.app.perf.run_perf``), which runs
``servekit fit``'s check first and predicts nothing for a launch the check refuses, so a layout
fit refuses is never returned. The first candidate whose predicted medians (or p99s, for the
``_p99`` keys) meet every target wins. Beside it the answer says how sure that is: each target
whose 80% interval (``servekit.perf.intervals``) reaches past its bound, and each candidate of
fewer devices that fit but missed a target at its prediction while the 80% interval of every target
it missed reaches under the bound (a layout worth measuring before buying more devices). When none
meets them, the answer names each target missed, the best any candidate reached with its 80%
interval (and whether that reaches under the bound), what binds there, and the concurrency at which
that candidate would meet it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from servekit.app.fit import FitOptions
from servekit.app.local_hardware import with_local
from servekit.app.perf import PerfOptions, perf_launch, run_perf
from servekit.app.request import load_documents
from servekit.catalog.domain import recipe_of, strategies_of
from servekit.catalog.ids import recipe_for_model
from servekit.errors import SelectionError, ServekitError
from servekit.perf.predict import NoRoom, Workload, predict
from servekit.synthesis.layouts import Layout, parallel_layouts
from servekit.synthesis.resolve import variant_runs

SLO_KEYS: dict[str, tuple[str, str | None]] = {
    "ttft_ms": ("ttft_ms", "median"),
    "tpot_ms": ("tpot_ms", "median"),
    "ttft_p99_ms": ("ttft_ms", "p99"),
    "tpot_p99_ms": ("tpot_ms", "p99"),
}
"""An SLO key -> (the prediction's field, its statistic); each is an upper bound."""

PREDICTION_FIELD = {"ttft_ms": "ttft_ms", "tpot_ms": "tpot_ms", "ttft_p99_ms": "ttft_p99_ms", "tpot_p99_ms": "tpot_p99_ms"}


def parse_slo(text: str) -> dict[str, float]:
    """``ttft_ms=500,tpot_ms=50`` -> {key: bound}; every key one of ``SLO_KEYS``."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in SLO_KEYS:
            raise SelectionError(f"--slo: {part!r} is not KEY=MILLISECONDS",
                                 fix=f"use keys {', '.join(SLO_KEYS)}, e.g. --slo ttft_ms=500,tpot_ms=50")
        try:
            bound = float(value)
        except ValueError:
            raise SelectionError(f"--slo: {key}={value!r} is not a number", fix=f"e.g. {key}=500") from None
        if bound <= 0:
            raise SelectionError(f"--slo: {key}={value} must be above 0")
        out[key] = bound
    if not out:
        raise SelectionError("--slo names no target", fix="e.g. --slo ttft_ms=500,tpot_ms=50")
    return out


def parse_workload(text: str) -> Workload:
    """``INPUT:OUTPUT:CONCURRENCY`` (tokens, tokens, requests in flight): every request of exactly
    those lengths, as ``servekit perf`` takes its ``--input-len`` and ``--output-len``."""
    parts = text.split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 3 or min(numbers) < 1:
        raise SelectionError(f"--workload {text!r} is not INPUT:OUTPUT:CONCURRENCY",
                             fix="e.g. --workload 1024:1024:64 (positive whole numbers)")
    return Workload(numbers[0], numbers[1], concurrency=numbers[2], fixed_lengths=True)


@dataclass
class SloOptions:
    fit: FitOptions
    slo: dict[str, float]
    workload: Workload


def _value(prediction: dict[str, Any], key: str) -> float:
    field, stat = SLO_KEYS[key]
    return float(prediction[field][stat])


def _interval(prediction: dict[str, Any], key: str) -> tuple[float, float]:
    field, stat = SLO_KEYS[key]
    low, high = prediction["interval80"][field][stat]
    return float(low), float(high)


def at_risk(prediction: dict[str, Any], slo: dict[str, float]) -> dict[str, list[float]]:
    """Targets met at the prediction whose 80% interval reaches past the bound: key -> [low, high]."""
    return {k: list(_interval(prediction, k)) for k, bound in slo.items()
            if _value(prediction, k) <= bound < _interval(prediction, k)[1]}


def within_reach(row: dict[str, Any], slo: dict[str, float]) -> bool:
    """Whether a candidate that missed a target may still meet every one it missed: the low end of
    each missed target's 80% interval is under its bound."""
    return bool(row["missed"]) and all(_interval(row["prediction"], k)[0] <= slo[k] for k in row["missed"])


def _reach_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"variant": row["variant"], "layout": row["layout"], "devices": row["devices"],
            "missed": {k: {"predicted": round(v, 3), "interval80": [round(x, 3) for x in _interval(row["prediction"], k)]}
                       for k, v in row["missed"].items()},
            "options": f"--variant {row['variant']} {row['layout_obj'].options()}"}


def candidates(opts: SloOptions) -> list[tuple[str, Layout]]:
    """(variant, layout) pairs, fewest devices first, then the recipe's variant order."""
    docs = with_local(load_documents(opts.fit.catalog), opts.fit.hardware)  # ``local`` or a device-table part
    found = recipe_for_model(docs.recipes, opts.fit.model, opts.fit.variant)
    if found is None:
        raise SelectionError(f"--slo searches the layouts of a recipe; {opts.fit.model!r} has none",
                             fix="name a recipe id (servekit list), or use servekit perf with --tp")
    recipe_id = found[0]
    variants = [opts.fit.variant] if opts.fit.variant else [
        v for v in (docs.recipes[recipe_id].get("variants") or {"default": {}})
        if variant_runs(docs, recipe_id, v, opts.fit.hardware)]  # a variant that cannot run here is no candidate
    profile = ((docs.taxonomy or {}).get("hardware_profiles") or {}).get(opts.fit.hardware)
    if profile is None:
        raise SelectionError(f"unknown hardware {opts.fit.hardware!r}", fix="see servekit list hardware")
    layouts = parallel_layouts(recipe_of(docs, recipe_id), profile, opts.fit.hardware, strategies_of(docs))
    pairs = [(v, layout) for v in variants for layout in layouts]
    order = {v: i for i, v in enumerate(variants)}
    return sorted(pairs, key=lambda p: (p[1].devices, order[p[0]]))


def _fit_options(opts: SloOptions, variant: str, layout: Layout) -> FitOptions:
    return replace(opts.fit, variant=variant, strategy=layout.strategy, tp=layout.tp, nodes=layout.nodes)


def _lift(opts: SloOptions, key: str, best: dict[str, Any]) -> str:
    """What would meet ``key`` on the best candidate: the highest concurrency that does, else a word."""
    fit = _fit_options(opts, best["variant"], best["layout_obj"])
    launch, _ = perf_launch(PerfOptions(fit, opts.workload))
    conc = opts.workload.concurrency or 1
    while conc > 1:
        conc //= 2
        try:
            pred = predict(launch, replace(opts.workload, concurrency=conc))
        except NoRoom:
            break
        if getattr(pred, PREDICTION_FIELD[key]) <= opts.slo[key]:
            return f"at concurrency {conc} {best['layout']} meets {key} (predicted {getattr(pred, PREDICTION_FIELD[key]):.1f})"
    return (f"no concurrency meets it on {best['layout']} (binding: {best['binding']}): a faster device, a "
            f"narrower-precision variant, or shorter requests")


def _none_priced(opts: SloOptions, tried: list[dict[str, Any]]) -> SelectionError:
    """Why no candidate got a prediction: each distinct refusal, with the layouts it refused."""
    if not tried:
        return SelectionError(f"no variant of {opts.fit.model} runs on {opts.fit.hardware}",
                              fix="see servekit show MODEL for the hardware each variant runs on")
    reasons: dict[str, list[str]] = {}
    for row in tried:
        reasons.setdefault(row["reason"], []).append(f"{row['variant']} {row['layout']}")
    if len(reasons) == 1:
        (reason, layouts), = reasons.items()
        return SelectionError(f"no layout of {opts.fit.model} on {opts.fit.hardware} can be priced: {reason} "
                              f"({len(layouts)} layout(s) tried)",
                              fix="see servekit fit and servekit perf with one of these layouts for the details")
    listed = "; ".join(f"{reason} ({', '.join(layouts[:3])}{', ...' if len(layouts) > 3 else ''})"
                       for reason, layouts in reasons.items())
    return SelectionError(f"no layout of {opts.fit.model} on {opts.fit.hardware} can be priced: {listed}",
                          fix="see servekit fit and servekit perf with one of these layouts for the details")


def search(opts: SloOptions) -> dict[str, Any]:
    """The fewest-device layout meeting every target, or what binds when none does."""
    tried: list[dict[str, Any]] = []
    for variant, layout in candidates(opts):
        fit = _fit_options(opts, variant, layout)
        try:
            pred = run_perf(PerfOptions(fit, opts.workload))
        except ServekitError as exc:
            tried.append({"variant": variant, "layout": layout.describe(), "fits": False, "reason": exc.message})
            continue
        missed = {k: _value(pred, k) for k, bound in opts.slo.items() if _value(pred, k) > bound}
        row = {"variant": variant, "layout": layout.describe(), "layout_obj": layout, "devices": layout.devices,
               "fits": True, "binding": pred["binding"], "missed": missed, "prediction": pred}
        tried.append(row)
        if not missed:
            reach = [_reach_row(r) for r in tried if r["fits"] and r["devices"] < layout.devices
                     and within_reach(r, opts.slo)]
            return {"met": True, "slo": opts.slo, "variant": variant, "layout": layout.describe(),
                    "devices": layout.devices, "options": f"--variant {variant} {layout.options()}",
                    "prediction": pred, "candidates_tried": len(tried), "at_risk": at_risk(pred, opts.slo),
                    "fewer_devices_within_reach": reach}
    fitting = [r for r in tried if r["fits"]]
    if not fitting:
        raise _none_priced(opts, tried)
    unmet: dict[str, Any] = {}
    for key, bound in opts.slo.items():
        best = min(fitting, key=lambda r: _value(r["prediction"], key))
        achieved = _value(best["prediction"], key)
        if achieved <= bound:
            continue
        low, high = _interval(best["prediction"], key)
        unmet[key] = {"target": bound, "best": round(achieved, 3), "layout": best["layout"], "variant": best["variant"],
                      "binding": best["binding"], "interval80": [round(low, 3), round(high, 3)],
                      "within_reach": low <= bound, "lift": _lift(opts, key, best)}
    return {"met": False, "slo": opts.slo, "unmet": unmet, "candidates_tried": len(tried),
            "fitting": len(fitting)}


def render_text(result: dict[str, Any]) -> str:
    slo = ", ".join(f"{k} <= {v:g}" for k, v in result["slo"].items())
    if result["met"]:
        p = result["prediction"]
        return "\n".join([
            f"SLO {slo}: met by variant {result['variant']}, {result['layout']}",
            f"  servekit plan {p['model']} --hardware {p['hardware']} {result['options']}",
            f"  predicted TTFT {p['ttft_ms']['median']:,.1f} ms (p99 {p['ttft_ms']['p99']:,.1f}), TPOT "
            f"{p['tpot_ms']['median']:,.2f} ms (p99 {p['tpot_ms']['p99']:,.2f}), {p['output_throughput_tok_s']:,.1f} tok/s; "
            f"binding: {p['binding']}",
            *(f"  {k}: its 80% interval {lo:,.1f}-{hi:,.1f} reaches past {result['slo'][k]:g}: measure it "
              "(servekit up, then servekit bench) before relying on it"
              for k, (lo, hi) in result.get("at_risk", {}).items()),
            *(f"  fewer devices, missed at the prediction but within the 80% interval: {r['layout']} "
              f"(variant {r['variant']}): "
              + "; ".join(f"{k} {m['predicted']:,.1f} (80%: {m['interval80'][0]:,.1f}-{m['interval80'][1]:,.1f})"
                          for k, m in r["missed"].items())
              + f"; worth measuring: servekit plan {p['model']} --hardware {p['hardware']} {r['options']}"
              for r in result.get("fewer_devices_within_reach", [])),
        ])
    lines = [f"SLO {slo}: no layout meets it ({result['fitting']} of {result['candidates_tried']} candidates fit)"]
    for key, u in result["unmet"].items():
        low, high = u["interval80"]
        reach = ", within reach: worth measuring" if u["within_reach"] else ""
        lines.append(f"  {key}: best {u['best']:,.1f} (80%: {low:,.1f}-{high:,.1f}{reach}) against {u['target']:g} "
                     f"({u['layout']}, variant {u['variant']}, binding: {u['binding']}); {u['lift']}")
    return "\n".join(lines)


def public(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without its internal objects (for JSON)."""
    return {k: v for k, v in result.items() if k != "layout_obj"}

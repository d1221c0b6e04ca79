"""``servekit fit --all``: every recipe variant with model facts against one hardware profile.

For each variant: the smallest tensor-parallel size (1, 2, 4 ... up to the GPUs asked for) at
which the variant's launch passes every check, the strategy that means, the longest context
that fits at that size, and the KV pool and concurrency at ``--max-model-len`` (else the
recipe's context). ``fits`` is true, false (no size works; ``reason`` names what failed at the
largest size) or null (weights or facts unknown). A variant that ``plan`` would not render on
the hardware (its precision, the recipe's opt-outs or the variant's ``supported_hardware``:
``servekit.synthesis.selection.hardware_allowed``) is false with the reason "variant not for this
hardware", before any memory is checked.
"""

from __future__ import annotations

from typing import Any

from servekit.app.fit import FitOptions, _hardware_profile, _recipe_argv, _user_argv
from servekit.app.request import load_documents
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import recipe_of
from servekit.errors import SelectionError, ServekitError
from servekit.facts.resolve import resolve_model
from servekit.fit.api import FitCheck, check_plan_fit
from servekit.records import record
from servekit.synthesis.selection import hardware_allowed

NOT_FOR_HARDWARE = "variant not for this hardware"


@record
class FitAllOptions:
    hardware: str
    gpus: int | None = None
    max_model_len: str | None = None
    feature: tuple[str, ...] = ()
    engine: str = "vllm"
    catalog: str | None = None


def _profile(docs: CatalogDocuments, opts: FitAllOptions) -> dict[str, Any]:
    profile = dict(_hardware_profile(docs, opts.hardware))
    if opts.gpus:
        if opts.gpus < 1:
            raise SelectionError(f"--gpus {opts.gpus}: must be at least 1", fix="pass a positive GPU count")
        per_device = float(profile["vram_gb"]) / int(profile.get("gpu_count") or 1)
        profile.update(gpu_count=opts.gpus, vram_gb=per_device * opts.gpus)
    return profile


def _sizes(gpus: int) -> list[int]:
    sizes, size = [], 1
    while size <= gpus:
        sizes.append(size)
        size *= 2
    return sizes


def _has_features(recipe: dict[str, Any], features: tuple[str, ...]) -> bool:
    offered = set((recipe.get("features") or {}).keys())
    return all(f in offered for f in features)


def _row(recipe_id: str, variant: str, fits: bool | None, reason: str, **fields: Any) -> dict[str, Any]:
    base = {"recipe": recipe_id, "variant": variant, "fits": fits, "tp": None, "strategy": None,
            "max_model_len": None, "kv_tokens": None, "concurrency": None, "longest_context": None, "reason": reason}
    return {**base, **fields}


def _reason(check: FitCheck) -> str:
    errors = [f for f in check.findings if f.severity == "error"]
    return f"{check.verdict}: {errors[0].message}" if errors else check.verdict


def variant_applies(docs: CatalogDocuments, recipe_id: str, variant: str, hardware: str) -> bool:
    """Whether ``plan`` would render this variant on this hardware (the same selection rule)."""
    profiles = (docs.taxonomy or {}).get("hardware_profiles") or {}
    recipe = recipe_of(docs, recipe_id)
    return hardware_allowed(profiles, recipe, recipe.variants.get(variant), hardware)


def _variant_row(docs: CatalogDocuments, profile: dict[str, Any], opts: FitAllOptions, recipe_id: str,
                 variant: str) -> dict[str, Any]:
    if not variant_applies(docs, recipe_id, variant, opts.hardware):
        return _row(recipe_id, variant, False, NOT_FOR_HARDWARE)
    try:
        resolved = resolve_model(recipe_id, variant=variant, recipes=docs.recipes)
    except ServekitError as exc:
        return _row(recipe_id, variant, None, f"no model facts: {exc}")
    argv = _recipe_argv(docs.recipes[recipe_id], variant, opts.hardware)
    argv += _user_argv(FitOptions(model=recipe_id, hardware=opts.hardware, max_model_len=opts.max_model_len))
    precision = (resolved.variant_doc or {}).get("precision")
    last: FitCheck | None = None
    for tp in _sizes(int(profile.get("gpu_count") or 1)):
        check = check_plan_fit(resolved.facts, profile, hardware_name=opts.hardware, argv=argv, tp=tp,
                               engine=opts.engine, precision=precision)
        last = check
        if check.fits is None:
            return _row(recipe_id, variant, None, check.verdict, tp=tp)
        if check.fits and check.report is not None:
            r = check.report
            return _row(recipe_id, variant, True, "fits", tp=tp, strategy="single GPU" if tp == 1 else
                        f"tensor parallel over {tp} GPUs", max_model_len=r.max_model_len, kv_tokens=r.kv_tokens,
                        concurrency=round(r.max_concurrency, 2), longest_context=r.longest_context)
    return _row(recipe_id, variant, False, _reason(last) if last else "no GPU to run on")


def fit_all(opts: FitAllOptions) -> list[dict[str, Any]]:
    """One row per recipe variant (recipes offering every ``feature``), in catalog order."""
    if not opts.hardware:
        raise SelectionError("servekit fit --all needs --hardware", fix="add --hardware HW (a taxonomy profile id)")
    docs = load_documents(opts.catalog)
    profile = _profile(docs, opts)
    rows = []
    for recipe_id, recipe in docs.recipes.items():
        if not _has_features(recipe, opts.feature):
            continue
        for variant in (recipe.get("variants") or {"default": {}}):
            rows.append(_variant_row(docs, profile, opts, recipe_id, variant))
    return rows


def render_rows(rows: list[dict[str, Any]]) -> str:
    """The rows for people: one line per variant."""
    lines = []
    for r in rows:
        verdict = {True: "fits", False: "no", None: "unknown"}[r["fits"]]
        where = f" TP{r['tp']}, {r['kv_tokens']:,} KV tokens, {r['concurrency']}x {r['max_model_len']:,}" if r["fits"] else ""
        reason = "" if r["fits"] else f" ({r['reason']})"
        lines.append(f"{r['recipe']} [{r['variant']}]: {verdict}{where}{reason}")
    return "\n".join(lines)

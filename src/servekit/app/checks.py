"""Fit checks for a plan: can each serve process start on its hardware (weights, KV, divisibility).

Model facts ship for the bundled recipes' checkpoints; any other checkpoint's facts are read
from the caches ``servekit facts fetch`` fills. A plan whose checkpoint has neither gets no fit
check, and says what is missing and how to fetch it. The memory model lives in ``servekit.fit``; importing it is not
free, so it is imported when a check runs: for the checks a plan shows, and for the layout choice of
a plan that names none (``servekit.app.layout``), so that ``--no-checks`` plans the same argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servekit.app.deploy_checks import deploy_checks, deploy_lines, deploy_passes
from servekit.app.flag_checks import flag_checks, flag_lines, flags_pass
from servekit.app.local_hardware import hardware_entry
from servekit.app.run_site import RunSite
from servekit.hardware.lookup import profile_of
from servekit.synthesis.plan import Plan


def has_facts(model_id: str) -> bool:
    """Whether model facts ship or are cached for this checkpoint (cheap: no fit import)."""
    from servekit.facts.missing import has_cached_facts
    from servekit.facts.shipped_index import has_shipped_facts

    return has_shipped_facts(model_id) or has_cached_facts(model_id)


def known_facts(model_id: str):
    """The checkpoint's shipped facts, else the facts a plan without a recipe reads (a local
    directory's, or the Hugging Face cache's, with weight bytes estimated from config.json when
    no safetensors header is at hand: ``servekit.app.model_facts``), else None (never the network).
    Every check of a model reads its facts here, so ``plan`` and ``fit`` weigh the same bytes."""
    from servekit.facts import shipped_facts

    facts = shipped_facts(model_id)
    if facts is not None:
        return facts
    from servekit.facts.missing import has_cached_facts

    if has_cached_facts(model_id) or (Path(model_id).expanduser() / "config.json").is_file():
        # the generic model reader (config.json, safetensors headers) only when nothing ships
        from servekit.app.model_facts import generic_model
        from servekit.app.model_ref import model_ref
        from servekit.errors import ServekitError

        try:
            facts = generic_model(model_ref(model_id)).facts
        except ServekitError:
            return None
    return facts


def plan_checks(docs, plan: Plan, *, flags: bool = False, vllm_version: str | None = None,
                site: RunSite = RunSite()) -> dict[str, Any]:
    """``{"fit": [per-process check dicts]}`` or ``{"fit": None, "note": why not}``; with ``flags``
    also ``"flags"``: every process argv linted against the release it runs in the form ``site``
    names (native install or container, this machine or another)."""
    facts = known_facts(plan.model_id)
    if facts is None:
        out: dict[str, Any] = {"fit": None, "note": _no_facts_note(plan.model_id)}
    else:
        checks = process_checks(docs, plan, facts, vllm_version=vllm_version)
        out = {"fit": [{"role": role, **check.to_dict()} for role, check in checks]}
    if flags:
        raw = hardware_entry(docs, plan.selection.hardware)
        profile = profile_of(raw, plan.selection.hardware) if raw else None
        out["flags"] = flag_checks(plan, vllm_version, profile, site=site, nightly=_nightly(docs, plan))
        out["deploy"] = deploy_checks(plan, profile, site)
    return out


def _nightly(docs, plan: Plan) -> bool:
    """The recipe needs a nightly vLLM build (``model.nightly_required``)."""
    recipe = docs.recipes.get(plan.selection.recipe_id) if isinstance(docs.recipes, dict) else None
    model = recipe.get("model") if isinstance(recipe, dict) else None
    return isinstance(model, dict) and model.get("nightly_required") is True


def process_checks(docs, plan: Plan, facts, *, extra_argv: Sequence[str] = (), engine: str | None = None,
                   cpu_kvcache_space_gib: float | None = None, vllm_version: str | None = None,
                   ) -> list[tuple[str, Any]]:
    """(role, ``FitCheck``) for each head process of a plan: its own argv (plus ``extra_argv``)
    and env against its hardware, variant precision and node count, under the memory rules of
    ``vllm_version`` (None: the newest release). ``plan`` and ``fit`` both check a selection
    through here, so they reach the same verdict."""
    from servekit.fit import check_plan_fit

    sel = plan.selection
    profile = hardware_entry(docs, sel.hardware) or {}
    recipe = docs.recipes.get(sel.recipe_id) or {}  # a plan without a recipe has no variant precision
    precision = ((recipe.get("variants") or {}).get(sel.variant) or {}).get("precision")
    results = []
    for proc in plan.processes:
        if proc.rank:
            continue  # followers repeat the head's layout
        argv = [str(t) for t in proc.argv()] + [str(a) for a in extra_argv]
        check = check_plan_fit(facts, profile, hardware_name=sel.hardware, argv=argv, engine=engine or sel.engine,
                               precision=precision, node_count=sel.node_count,
                               cpu_kvcache_space_gib=cpu_kvcache_space_gib, engine_version=vllm_version,
                               engine_env={k: str(v) for k, v in {**plan.env_map(), **proc.env_map()}.items()})
        results.append((proc.role, check))
    return results


def _no_facts_note(model_id: str) -> str:
    from servekit.facts.missing import looks_like_repo_id, missing_message

    if looks_like_repo_id(model_id):
        return f"{missing_message(model_id)}; fit not checked"
    return f"no model facts for {model_id}; fit not checked"


def checks_pass(checks: dict[str, Any]) -> bool:
    """False when any process has an error finding (the launch would not start)."""
    return (all(result.get("ok", True) for result in checks.get("fit") or []) and flags_pass(checks.get("flags"))
            and deploy_passes(checks.get("deploy")))


def check_lines(checks: dict[str, Any]) -> list[str]:
    """Text lines for the checks block of a plan."""
    if checks.get("fit") is None:
        return [f"fit: {checks.get('note', 'not checked')}", *flag_lines(checks.get("flags")),
                *deploy_lines(checks.get("deploy"))]
    lines = flag_lines(checks.get("flags")) + deploy_lines(checks.get("deploy"))
    for result in checks["fit"]:
        verdict = result.get("verdict") or ("fits" if result.get("ok") else "DOES NOT FIT")
        lines.append(f"fit ({result['role']}): {verdict}")
        for f in result.get("findings", []):
            fix = f" (fix: {f['fix']})" if f.get("fix") else ""
            lines.append(f"  {f.get('severity', '')} {f.get('code', '')}: {f.get('message', '')}{fix}")
    return lines

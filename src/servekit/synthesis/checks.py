"""Fit checks for a plan: can each serve process start on its hardware (weights, KV, divisibility).

Model facts ship for the bundled recipes' checkpoints; a plan whose checkpoint has no facts
gets no fit check (and says so). The fit engine lives in ``servekit.fit``; importing it is not
free, so callers ask for checks explicitly.
"""

from __future__ import annotations

from typing import Any

from servekit.synthesis.plan import Plan


def has_facts(model_id: str) -> bool:
    """Whether model facts ship for this checkpoint (cheap: no fit import)."""
    from servekit.facts.shipped_index import has_shipped_facts

    return has_shipped_facts(model_id)


def plan_checks(docs, plan: Plan) -> dict[str, Any]:
    """``{"fit": [per-process check dicts]}`` or ``{"fit": None, "note": why not}``."""
    from servekit.facts import shipped_facts
    from servekit.fit import check_plan_fit

    facts = shipped_facts(plan.model_id)
    if facts is None:
        return {"fit": None, "note": f"no model facts ship for {plan.model_id}; fit not checked"}
    sel = plan.selection
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(sel.hardware) or {}
    precision = ((docs.recipes[sel.recipe_id].get("variants") or {}).get(sel.variant) or {}).get("precision")
    results = []
    for proc in plan.processes:
        if proc.rank:
            continue  # followers repeat the head's layout
        check = check_plan_fit(facts, profile, hardware_name=sel.hardware, argv=[str(t) for t in proc.argv()],
                               engine=sel.engine, precision=precision, node_count=sel.node_count)
        results.append({"role": proc.role, **check.to_dict()})
    return {"fit": results}


def checks_pass(checks: dict[str, Any]) -> bool:
    """False when any process has an error finding (the launch would not start)."""
    return all(result.get("ok", True) for result in checks.get("fit") or [])


def check_lines(checks: dict[str, Any]) -> list[str]:
    """Text lines for the checks block of a plan."""
    if checks.get("fit") is None:
        return [f"fit: {checks.get('note', 'not checked')}"]
    lines = []
    for result in checks["fit"]:
        verdict = "fits" if result.get("ok") else "DOES NOT FIT"
        lines.append(f"fit ({result['role']}): {verdict}")
        for f in result.get("findings", []):
            fix = f" (fix: {f['fix']})" if f.get("fix") else ""
            lines.append(f"  {f.get('severity', '')} {f.get('code', '')}: {f.get('message', '')}{fix}")
    return lines

"""Flag checks for a plan: every vLLM-form process argv linted against the flag catalog of the
vLLM release the plan targets (``plan --vllm-version``; default: the pinned catalog).

The plan's argv is in vLLM's form whatever the engine (other engines translate from it and
carry their own findings), so the native engine's lint applies; a spelling that a newer stored
release renamed is a note naming the new spelling, an unknown flag or a bad value is an error:
the command would not start.
"""

from __future__ import annotations

from typing import Any

from servekit.engines.common.engine import Engine
from servekit.engines.registry import engine_for_platform, get_engine, native_engine
from servekit.errors import ServekitError
from servekit.hardware.profile import HardwareProfile
from servekit.synthesis.plan import Plan


def checking_engine(plan: Plan, profile: HardwareProfile | None) -> Engine:
    """The plan's engine; for a plan in vLLM's own form, the vLLM build its hardware runs."""
    engine = get_engine(plan.selection.engine)
    if engine.id == native_engine().id and profile is not None:
        return engine_for_platform(profile.platform)
    return engine


def flag_checks(plan: Plan, vllm_version: str | None = None,
                profile: HardwareProfile | None = None) -> list[dict[str, Any]]:
    """One entry per process: role, rank, the catalog version, valid, and the findings. A plan
    for an engine that reads vLLM command lines (vLLM itself and its forks) is linted by that
    engine; one for an engine with a form of its own carries its findings in its translation."""
    engine = checking_engine(plan, profile)
    if engine.id != native_engine().id and not engine.vllm_platforms:
        return []  # an engine with a form of its own: its translation carries the findings
    out = []
    for proc in plan.processes:
        argv = [str(token) for token in proc.argv()]
        if not (engine.recognizes(argv) or native_engine().recognizes(argv)):
            continue  # a companion (router, cache server) is not a vLLM command
        try:
            result = engine.lint(argv, vllm_version)
        except ServekitError as exc:  # no catalog of that release is stored: say so, do not guess
            note = {"severity": "note", "code": "flags-not-checked", "message": exc.message, "fix": exc.fix}
            out.append({"role": proc.role, "rank": proc.rank, "version": vllm_version, "valid": True,
                        "checked": False, "findings": [note]})
            continue
        out.append({"role": proc.role, "rank": proc.rank, "version": result.version, "valid": result.valid,
                    "checked": True, "findings": [f.lint_dict() for f in result.findings]})
    return out


def flags_pass(results: list[dict[str, Any]] | None) -> bool:
    return all(r["valid"] for r in results or [])


def flag_lines(results: list[dict[str, Any]] | None) -> list[str]:
    lines = []
    for r in results or []:
        where = r["role"] + (f" {r['rank']}" if r["rank"] else "")
        verdict = "not checked" if not r.get("checked", True) else ("valid" if r["valid"] else "INVALID")
        lines.append(f"flags ({where}, vLLM {r['version']}): {verdict}")
        for f in r["findings"]:
            fix = f" (fix: {f['fix']})" if f.get("fix") else ""
            lines.append(f"  {f['severity']} {f['code']}: {f['message']}{fix}")
    return lines

"""The checks a plan passes before ``up`` spawns anything: every engine process argv linted
against the pinned engine (through the registry), the translation's findings, and the fit check.
A router's or companion's command is its own program's, not the engine's: it is not linted."""

from __future__ import annotations

import shlex
from typing import Any

from servekit.engines.common.command_line import split_docker_run
from servekit.engines.common.files import HERE, FilePlace
from servekit.engines.registry import get_engine
from servekit.launch.launch_plan import LaunchPlan
from servekit.records import record
from servekit.synthesis.image_files import ImagePlace


@record
class Prelaunch:
    ok: bool
    reasons: tuple[str, ...]
    findings: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reasons": list(self.reasons), "findings": list(self.findings)}


def container_files(plan: LaunchPlan) -> FilePlace:
    """Where the container form's files are: in its image, and this machine's behind its bind mounts."""
    run = split_docker_run(shlex.split(plan.docker_commands[0])) if plan.docker_commands else None
    if run is None:
        return HERE
    return ImagePlace(run.image, HERE, run.bind_mounts())


def lint_findings(plan: LaunchPlan, files: FilePlace = HERE) -> list[dict[str, Any]]:
    """Each engine process linted; the files it names looked for at ``files`` (this machine, or
    the container's image for ``up --docker``)."""
    engine = get_engine(plan.engine)
    out = []
    for process in plan.engines:
        result = engine.lint(list(process.argv), None, files)
        out += [{"check": "lint", "role": process.role, "severity": f.severity, "code": f.code,
                 "message": f.message, "fix": f.fix, "engine": f"{engine.id} {result.version}"}
                for f in result.findings]
    out += [{"check": "translate", "role": "serve", **f} for f in plan.findings]
    return out


def fit_findings(fit: Any) -> list[dict[str, Any]]:
    if fit is None:
        return [{"check": "fit", "severity": "note", "code": "fit-not-checked",
                 "message": "no model facts for this model here; fit not checked", "fix": None}]
    return [{"check": "fit", **f.to_dict()} for f in fit.findings]


def _reason(finding: dict[str, Any]) -> str:
    fix = f" (fix: {finding['fix']})" if finding.get("fix") else ""
    return f"{finding['check']}: {finding.get('code')}: {finding.get('message')}{fix}"


def prelaunch(plan: LaunchPlan, fit: Any, *, docker: bool = False) -> Prelaunch:
    """``fit`` is the plan's ``FitCheck`` (None when no facts were found); ``docker``: the
    container form runs, so the files its command names are looked for in its image."""
    findings = lint_findings(plan, container_files(plan) if docker else HERE) + fit_findings(fit)
    errors = [f for f in findings if f.get("severity") == "error"]
    return Prelaunch(not errors, tuple(_reason(f) for f in errors), tuple(findings))

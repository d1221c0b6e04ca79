"""Deployment checks over the whole artifact, beside the flag and fit checks: the container image
against the hardware's platform (``image_checks``), and for each server of a plan, in the form it
runs (``RunSite``), the devices its environment and container let it see (``device_checks``) and
its container's network and ``docker run`` flags (``network_checks``). Each finding has a stable
code and names its fix; ``deploy_passes`` is False when one is an error.
"""

from __future__ import annotations

from typing import Any

from servekit.app.device_checks import container_findings, node_share, visible_findings
from servekit.app.image_checks import image_omni_findings, image_platform_findings
from servekit.app.network_checks import network_findings
from servekit.app.run_release import omni_release
from servekit.app.run_site import RunSite, container_argv
from servekit.engines.registry import get_engine, native_engine
from servekit.findings import Finding
from servekit.hardware.profile import HardwareProfile
from servekit.synthesis.plan import Plan, Process


def deploy_checks(plan: Plan, profile: HardwareProfile | None, site: RunSite = RunSite()) -> list[dict[str, Any]]:
    """One dict per finding (role, rank, severity, code, message, fix), each problem once."""
    out: list[dict[str, Any]] = []
    if site.in_container(plan):
        images = get_engine(plan.selection.engine).images
        found = image_platform_findings(plan.docker.image, profile, images)
        if any(omni_release(proc) is not None for proc in plan.processes):
            found += image_omni_findings(plan.docker.image, profile, images)
        out += [{"role": "container", "rank": 0, **f.to_dict()} for f in found]
    seen: set[tuple[str, str]] = set()
    for proc in plan.processes:
        argv = [str(w) for w in proc.argv()]
        if not native_engine().recognizes(argv):
            continue  # a router or companion: not a server of the engine
        for finding in _process_findings(plan, proc, argv, profile, site):
            if (finding.code, finding.message) in seen:
                continue
            seen.add((finding.code, finding.message))
            out.append({"role": proc.role, "rank": proc.rank, **finding.to_dict()})
    return out


def _process_findings(plan: Plan, proc: Process, argv: list[str], profile: HardwareProfile | None,
                      site: RunSite) -> list[Finding]:
    share = node_share(argv)
    env = {name: str(value) for name, value in {**plan.env_map(), **proc.env_map()}.items()}
    found = visible_findings(share, env, profile) if profile is not None else []
    if site.in_container(plan) and site.runs_docker:
        docker = container_argv(plan, proc)
        found += container_findings(share, docker)
        found += network_findings(docker, several_machines=spans_machines(plan))
    return found


def spans_machines(plan: Plan) -> bool:
    """The plan's servers run on several machines (``Docker.several_nodes``, or more than one node)."""
    return plan.docker.several_nodes or plan.selection.node_count > 1


def deploy_passes(findings: list[dict[str, Any]] | None) -> bool:
    return not any(f.get("severity") == "error" for f in findings or [])


def deploy_lines(findings: list[dict[str, Any]] | None) -> list[str]:
    lines = []
    for f in findings or []:
        where = f["role"] + (f" {f['rank']}" if f.get("rank") else "")
        fix = f" (fix: {f['fix']})" if f.get("fix") else ""
        lines.append(f"deploy ({where}): {f['severity']} {f['code']}: {f['message']}{fix}")
    return lines

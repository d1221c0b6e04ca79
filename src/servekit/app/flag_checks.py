"""Flag checks for a plan: every vLLM-form process argv linted against the flag catalog of the
release that process runs (``servekit.app.run_site``: what the native form installs, what the
container form's image carries, vLLM-Omni for an omni process), and the files it names looked
for where it runs.

The plan's argv is in vLLM's form whatever the engine (other engines translate from it and
carry their own findings), so the native engine's lint applies; a spelling that a newer stored
release renamed is a note naming the new spelling, an unknown flag or a bad value is an error:
the command would not start. Where no catalog of the release that runs is stored, the pinned
catalog is checked instead, and a name it does not know (an option, a key, a parser) is a warning
that says which release runs and which catalog would settle it: that release may well have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from servekit.app.run_release import RunRelease, full_version
from servekit.app.run_site import RunSite, engine_release
from servekit.engines.common.engine import Engine
from servekit.engines.common.files import FilePlace
from servekit.engines.common.findings import Finding, LintResult, names_unknown_to_catalog
from servekit.engines.common.flags import version_key
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


def flag_checks(plan: Plan, vllm_version: str | None = None, profile: HardwareProfile | None = None,
                *, site: RunSite = RunSite(), nightly: bool = False) -> list[dict[str, Any]]:
    """One entry per process: role, rank, the catalog version checked, the release that runs,
    valid, and the findings. A plan for an engine that reads vLLM command lines (vLLM itself and
    its forks) is linted by that engine; one for an engine with a form of its own carries its
    findings in its translation. ``nightly``: the recipe needs a nightly build."""
    engine = checking_engine(plan, profile)
    if engine.id != native_engine().id and not engine.vllm_platforms:
        return []  # an engine with a form of its own: its translation carries the findings
    pinned = vllm_version or engine_release(engine.user_install.default_version if engine.user_install else None)
    out = []
    for proc in plan.processes:
        argv = [str(token) for token in proc.argv()]
        if not (engine.recognizes(argv) or native_engine().recognizes(argv)):
            continue  # a companion (router, cache server) is not a vLLM command
        release = site.release(plan, proc, nightly=nightly, default=engine.default_version, pinned=pinned)
        asked = vllm_version is not None and release.version is not None and same_release(release.version, vllm_version)
        result, exact, nearest = _lint(engine, argv, release, site.files(plan, proc), nearest_ok=asked)
        findings = result.findings if exact else settled(result.findings, release)
        if nearest:
            findings = (nearest_note(release, result.version), *findings)
        floor = below_minimum(plan, site.vllm_release(plan, nightly=nightly, default=engine.default_version,
                                                      pinned=pinned), site.in_container(plan))
        if floor is not None:
            findings = (floor, *findings)
        other = _container_release(plan, proc, site, engine, nightly, pinned)
        if exact and other is not None and other.version != result.version:
            findings = with_container_fix(findings, other)
        out.append({"role": proc.role, "rank": proc.rank, "version": result.version, "runs": release.what,
                    "exact": exact, "valid": not any(f.is_error for f in findings), "checked": True,
                    "findings": [f.lint_dict() for f in findings]})
    return out


def below_minimum(plan: Plan, release: RunRelease, container: bool) -> Finding | None:
    """An error when the vLLM release the form runs is older than the plan's minimum (the highest
    ``min_vllm_version`` of recipe, variant, features and KV option): that release lacks what the
    recipe needs, so the server would not start as planned."""
    least = plan.min_version
    if not (release.version and release.pinned and least and version_key(least)[0]):
        return None  # an unpinned install or a latest image may well run a newer release
    if version_key(release.version) >= version_key(full_version(least)):
        return None
    fix = (f"use an image of vLLM {least} or newer (--vllm-version {least} picks its tag, or --image "
           "REPOSITORY:TAG)" if container else f"pass --vllm-version {least} (or a newer release)")
    sources = " and ".join(plan.min_version_sources) or "the recipe"
    return Finding("error", "release-below-minimum",
                   f"this plan runs {release.what}, older than vLLM {least}, the minimum that {sources} names",
                   fix, release=f"vllm {release.version}")


def same_release(a: str, b: str) -> bool:
    return version_key(a.removeprefix("v")) == version_key(b.removeprefix("v"))


def _lint(engine: Engine, argv: list[str], release: RunRelease, files: FilePlace, *,
          nearest_ok: bool = False) -> tuple[LintResult, bool, bool]:
    """The lint against the release that runs when its catalog is stored (exact), else (for the
    release ``--vllm-version`` asks for: ``nearest_ok``) against the newest stored release at or
    below it (the third value says so), else against the engine's pinned catalog."""
    if release.version:
        try:
            return engine.lint(argv, release.version, files), True, False
        except ServekitError:
            pass  # no catalog of that release is stored
        nearest = engine.catalogs.nearest(release.version) if nearest_ok and engine.catalogs is not None else None
        if nearest is not None:
            return engine.lint(argv, nearest, files), False, True
    result = engine.lint(argv, None, files)
    return result, result.version == release.version, False


def nearest_note(release: RunRelease, checked: str) -> Finding:
    """Says that a release without a stored catalog is checked with the newest stored one at or below it."""
    return Finding("note", "release-resolved", f"vLLM {release.version} has no stored flag catalog; it is checked "
                   f"with the catalog of {checked}, the newest stored release at or below it", release.settles,
                   release=f"vllm {checked}")


def settled(findings: Sequence[Finding], release: RunRelease) -> tuple[Finding, ...]:
    """Findings of a catalog other than the release that runs: a name that catalog lacks is a
    warning saying which release runs and which catalog would settle it."""
    out = []
    for f in findings:
        if f.is_error and names_unknown_to_catalog(f):
            checked = f.release or "the pinned catalog"
            fix = f"{release.settles} would settle it" + (f"; if that release lacks it too: {f.fix}" if f.fix else "")
            f = replace(f, severity="warning", fix=fix,
                        message=f"{f.message} ({checked} has no such name, but this plan runs {release.what})")
        out.append(f)
    return tuple(out)


def _container_release(plan: Plan, proc, site: RunSite, engine: Engine, nightly: bool,
                       pinned: str | None) -> RunRelease | None:
    """The release the container form would run, when this check is of the native form."""
    if site.container or plan.docker.image is None:
        return None
    return RunSite(container=True, here=site.here).release(plan, proc, nightly=nightly,
                                                           default=engine.default_version, pinned=pinned)


def with_container_fix(findings: Sequence[Finding], release: RunRelease) -> tuple[Finding, ...]:
    """A name the installed release lacks may be in the recipe's image, which runs another
    release: the fix names the docker form too."""
    extra = f"or run the docker form (plan --docker), which runs {release.what}"
    return tuple(replace(f, fix=f"{f.fix}; {extra}" if f.fix else extra)
                 if f.is_error and names_unknown_to_catalog(f) else f for f in findings)


def flags_pass(results: list[dict[str, Any]] | None) -> bool:
    return all(r["valid"] for r in results or [])


def flag_lines(results: list[dict[str, Any]] | None) -> list[str]:
    lines = []
    for r in results or []:
        where = r["role"] + (f" {r['rank']}" if r["rank"] else "")
        verdict = "not checked" if not r.get("checked", True) else ("valid" if r["valid"] else "INVALID")
        runs = "" if r.get("exact", True) else f"; runs {r['runs']}"
        lines.append(f"flags ({where}, vLLM {r['version']}{runs}): {verdict}")
        for f in r["findings"]:
            fix = f" (fix: {f['fix']})" if f.get("fix") else ""
            lines.append(f"  {f['severity']} {f['code']}: {f['message']}{fix}")
    return lines

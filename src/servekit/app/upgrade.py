"""``servekit lint --from A --to B``: the engines' upgrade check of a command, plus what the upgrade
does to its memory when the model's facts are known and the hardware is named: the KV pool and
the fit verdict on A (the command as written) and on B (the rewritten command), from the memory
rules of each release (``servekit.fit.release_rules``)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

from servekit.app.checks import known_facts
from servekit.app.request import load_documents
from servekit.engines.common.command_line import strip_env
from servekit.engines.common.engine import Engine
from servekit.engines.registry import get_engine, native_engine
from servekit.engines.upgrade import Sourced, UpgradeReport, check_upgrade
from servekit.errors import SelectionError
from servekit.findings import Finding
from servekit.fit.api import FitCheck, check_plan_fit
from servekit.records import record

RULES_SOURCE = "servekit.fit.release_rules (the memory rules of each vLLM release)"
NOTABLE = 0.10  # a KV pool that moves by more than this share is a warning, not a note


@record
class UpgradeLint:
    report: UpgradeReport
    memory: tuple[Sourced, ...]

    @property
    def ok(self) -> bool:
        return self.report.ok

    def to_dict(self) -> dict[str, Any]:
        out = self.report.to_dict()
        out["findings"] += [s.to_dict() for s in self.memory]
        return out


def lint_upgrade(argv: Sequence[str], engine: str | None, old: str, new: str, hardware: str | None,
                 guess: Callable[[list[str]], str]) -> UpgradeLint:
    """The upgrade check of ``argv`` from release ``old`` to ``new`` (``engine``: guessed when None)."""
    chosen = get_engine(engine or guess(list(argv)))
    report = check_upgrade(chosen, old, new, argv)
    memory: tuple[Sourced, ...] = ()
    if chosen.id == native_engine().id:
        memory = tuple(memory_change(chosen, argv, report, hardware))
    return UpgradeLint(report, memory)


def _model(engine: Engine, argv: Sequence[str]) -> str | None:
    args = engine.split_command(argv).args
    return args[0] if args and not args[0].startswith("-") else None


def memory_change(engine: Engine, argv: Sequence[str], report: UpgradeReport, hardware: str | None) -> list[Sourced]:
    """Findings on the KV pool and fit from release ``report.old`` to ``report.new``."""
    model = _model(engine, argv)
    facts = known_facts(model) if model else None
    if facts is None:
        return []
    if hardware is None:
        return [Sourced(Finding("note", "memory-not-compared",
                                f"the facts of {model} are known: name the hardware to compare its KV pool and fit "
                                f"on {report.old} and {report.new}", "add --hardware HW (servekit list hardware)"))]
    profiles = (load_documents(None).taxonomy or {}).get("hardware_profiles") or {}
    if hardware not in profiles:
        raise SelectionError(f"unknown hardware {hardware!r}", fix=f"use one of: {', '.join(sorted(profiles))}")
    before = _fit(engine, argv, facts, profiles[hardware], hardware, report.old)
    after_argv = shlex.split(report.rewritten) if report.rewritten else list(argv)
    after = _fit(engine, after_argv, facts, profiles[hardware], hardware, report.new)
    return _compare(before, after, report, hardware)


def _fit(engine: Engine, argv: Sequence[str], facts, profile: dict, hardware: str, version: str) -> FitCheck:
    args = list(engine.split_command(argv).args)
    env, _ = strip_env(argv)
    options = args[1:] if args and not args[0].startswith("-") else args
    return check_plan_fit(facts, profile, hardware_name=hardware, argv=options, engine_version=version,
                          engine_env=dict(env))


def _compare(before: FitCheck, after: FitCheck, report: UpgradeReport, hardware: str) -> list[Sourced]:
    release = f"{report.engine} {report.new}"
    out = []
    a, b = before.report, after.report
    if a is not None and b is not None and a.kv_tokens != b.kv_tokens:
        share = abs(b.kv_tokens - a.kv_tokens) / max(a.kv_tokens, 1)
        out.append(Sourced(Finding(
            "warning" if share > NOTABLE else "note", "kv-pool-change",
            f"on {hardware} the KV pool goes from {a.available_kv_gib:.2f} GiB ({a.kv_tokens:,} tokens) on "
            f"{report.old} to {b.available_kv_gib:.2f} GiB ({b.kv_tokens:,} tokens) on {report.new}",
            "set --max-model-len, --max-num-seqs or --gpu-memory-utilization to what the new pool holds"
            if b.kv_tokens < a.kv_tokens else None, None, release), RULES_SOURCE))
    if before.fits and after.fits is False:
        failed = next((f for f in after.findings if f.is_error), None)
        out.append(Sourced(Finding(
            "warning", "fit-change", f"the command fits {hardware} on {report.old} but not on {report.new}: "
            + (failed.message if failed else "it runs out of memory"), failed.fix if failed else None, None, release),
            RULES_SOURCE))
    return out

"""Every verified (recipe, hardware) pair of a catalog, planned as ``servekit plan`` plans it (text
and ``--docker``), in this process, with the codes of what refused each plan that exits 1.

A recipe marks a pair verified with ``meta.hardware: {h200: verified}``: people ran it. Only
hardware the catalog's taxonomy defines is planned. ``outcomes`` goes through the CLI's own
path (``plan_request`` -> ``plan_with_overrides`` -> ``print_plan``), with the catalog read once.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from servekit.app.overridden import plan_with_overrides
from servekit.app.plan_view import engine_errors
from servekit.catalog.documents import CatalogDocuments
from servekit.cli.plan_cmd import PlanOptions, plan_request, print_plan
from servekit.errors import ServekitError

FORMS = ("text", "docker")


@dataclass(frozen=True)
class Outcome:
    recipe: str
    hardware: str
    form: str
    exit_code: int
    reasons: tuple[str, ...]
    """Codes of the error findings that refused it (``error:<message>`` for a refusal that is no finding)."""
    fixes: tuple[str | None, ...]
    """The fix of each error finding."""
    releases: tuple[str | None, ...] = ()
    """The release each error finding was checked against (None for a finding no release decides)."""


def verified_pairs(docs: CatalogDocuments) -> list[tuple[str, str]]:
    """(recipe id, hardware) of every pair a recipe marks verified whose hardware the taxonomy has."""
    known = set(docs.taxonomy.get("hardware_profiles") or {})
    out = []
    for rid, recipe in sorted(docs.recipes.items()):
        marks = ((recipe.get("meta") or {}).get("hardware") or {}) if isinstance(recipe, dict) else {}
        out += [(rid, hw) for hw, mark in marks.items() if mark == "verified" and hw in known]
    return out


def _errors(result: Any) -> list[dict[str, Any]]:
    """Every error finding of a planned result, as dicts (engine translation, flags, deploy, fit)."""
    found = [{"code": f.code, "fix": f.fix} for f in engine_errors(result)]
    checks = result.checks or {}
    for entry in checks.get("flags") or []:
        found += [f for f in entry["findings"] if f["severity"] == "error"]
    found += [f for f in checks.get("deploy") or [] if f["severity"] == "error"]
    for entry in checks.get("fit") or []:
        found += [f for f in entry.get("findings", []) if f.get("severity") == "error"]
    return found


def outcome(docs: CatalogDocuments, recipe: str, hardware: str, form: str) -> Outcome:
    opts = PlanOptions(model=recipe, hardware=hardware, docker=form == "docker")
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            result = plan_with_overrides(plan_request(opts, docs), opts.overrides)
            code = print_plan(result, opts)
    except ServekitError as exc:
        return Outcome(recipe, hardware, form, 1, (f"error:{exc.message}",), (exc.fix,))
    errors = _errors(result) if code else []
    return Outcome(recipe, hardware, form, code, tuple(f["code"] for f in errors), tuple(f.get("fix") for f in errors),
                   tuple(f.get("release") for f in errors))


def outcomes(docs: CatalogDocuments, forms: Iterable[str] = FORMS) -> Iterator[Outcome]:
    for recipe, hardware in verified_pairs(docs):
        for form in forms:
            yield outcome(docs, recipe, hardware, form)


def refusal_counts(results: Iterable[Outcome]) -> Counter[str]:
    """Refused plans per reason code (a plan refused for two reasons counts under each)."""
    counts: Counter[str] = Counter()
    for result in results:
        if result.exit_code:
            counts.update(set(result.reasons) or {"(no reason)"})
    return counts

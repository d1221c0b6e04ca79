"""Several vLLM releases side by side: the stored catalog versions, the catalog a plan's vLLM
version selects, and the spellings a release renamed.

A launch written for one release may use a spelling the next one renamed (vLLM 0.33 writes
``--disable-prefix-caching`` where 0.32 wrote ``--no-enable-prefix-caching``). Checked at the
release that renamed it, the old spelling (still parsed, hidden from help) gets a warning naming
the new one; checked at an older release, a note says which newer stored release renames it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from servekit.engines.common.findings import NOTE, WARNING, Finding, finding
from servekit.engines.common.flags import FlagCatalog, version_key
from servekit.engines.common.scan_result import Occurrence
from servekit.engines.vllm.catalog import CATALOGS, DEFAULT_VERSION
from servekit.errors import ServekitError

if TYPE_CHECKING:
    from servekit.engines.common.catalog_diff import CatalogDiff

RENAMED_CODE = "renamed-option"


def stored_versions() -> list[str]:
    """vLLM versions with a stored ``serve`` catalog, oldest first."""
    return CATALOGS.versions()


def catalog_version(version: str | None) -> str:
    """The stored catalog a plan's vLLM version selects: itself, ``0.33`` as ``0.33.0``, the default
    for None; an unknown version raises a ServekitError listing the stored ones."""
    if not version:
        return DEFAULT_VERSION
    stored = stored_versions()
    for candidate in (version, f"{version}.0", version.removeprefix("v")):
        if candidate in stored:
            return candidate
    raise ServekitError(
        f"no vLLM {version} flag catalog is stored, so a plan for it cannot be checked",
        fix=f"use one of: {', '.join(stored)} (or extract {version} with scripts/extract_vllm_flags.py)",
    )


def plan_catalog(version: str | None) -> FlagCatalog:
    """The ``vllm serve`` catalog a plan pinned to ``version`` is checked against."""
    return CATALOGS.load(catalog_version(version))


@lru_cache(maxsize=None)
def _diff(old: str, new: str) -> CatalogDiff:
    # imported here, from the same package layer, for laziness: only a launch whose option a newer
    # release may rename (``_respelled``) needs the full diff
    from servekit.engines.common.catalog_diff import diff_catalogs

    return diff_catalogs(CATALOGS.load(old), CATALOGS.load(new))


def newer_versions(version: str) -> list[str]:
    return [v for v in stored_versions() if version_key(v) > version_key(version)]


def _hidden_spelling(catalog: FlagCatalog, occ: Occurrence) -> Finding | None:
    if occ.option not in occ.spec.hidden_negations or not occ.spec.negation:
        return None
    return finding(
        WARNING, RENAMED_CODE,
        f"{occ.option} is an older spelling; vLLM {catalog.version} writes {occ.spec.negation} "
        "(the old one still parses but is hidden from help)",
        option=occ.option, fix=f"write {occ.spec.negation}",
    )


@lru_cache(maxsize=None)
def _respelled(old: str, new: str) -> frozenset[str]:
    """The names and negations of ``old``'s flags that ``new`` spells otherwise: every option a
    rename of ``_diff(old, new)`` can start from, found without building ``new``'s catalog, so a
    launch whose options no newer release renames (most) never loads one."""
    after = CATALOGS.spellings(new)
    out: set[str] = set()
    for spec in CATALOGS.load(old).flags:
        if (spelled := after.get(spec.dest or spec.name)) is None:
            continue
        name, negation = spelled
        out.update(option for option, now in ((spec.name, name), (spec.negation, negation)) if option and option != now)
    return frozenset(out)


def _renamed_later(version: str, occ: Occurrence) -> Finding | None:
    for newer in newer_versions(version):
        if occ.option not in _respelled(version, newer):
            continue
        rename = _diff(version, newer).rename_of(occ.option)
        if rename is None:
            continue
        if not rename.new:
            return finding(NOTE, RENAMED_CODE, f"vLLM {newer} drops {occ.option}", option=occ.option)
        works = "still parses there, hidden" if rename.still_parses else "is refused there"
        return finding(NOTE, RENAMED_CODE, f"vLLM {newer} renames {occ.option} to {rename.new} (the old spelling {works})",
                       option=occ.option, fix=f"write {rename.new} for vLLM {newer} and later")
    return None


def other_release_spelling(catalog: FlagCatalog, option: str) -> tuple[str, str] | None:
    """(this release's spelling, the release that writes ``option``) for an option ``catalog`` does not
    know that another stored release spells for a flag this one has (0.33's ``--disable-prefix-caching``
    is ``--no-enable-prefix-caching`` in 0.32); None when no stored release knows it."""
    others = sorted((v for v in stored_versions() if v != catalog.version),
                    key=lambda v: (version_key(v) < version_key(catalog.version), version_key(v)))
    for version in others:
        spec = CATALOGS.load(version).get(option)
        here = catalog.by_dest(spec.dest) if spec is not None and spec.dest else None
        if here is None:
            continue
        spelled = here.negation if spec.is_negation(option) else here.name
        if spelled and spelled != option and catalog.get(spelled) is not None:
            return spelled, version
    return None


def renamed_spelling_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    """Each option written in a spelling this or a newer stored release renamed, once."""
    out: list[Finding] = []
    seen: set[str] = set()
    for occ in occurrences:
        if occ.option in seen:
            continue
        seen.add(occ.option)
        found = _hidden_spelling(catalog, occ)
        if found is None and catalog.version in stored_versions():
            found = _renamed_later(catalog.version, occ)
        if found is not None:
            out.append(found)
    return out

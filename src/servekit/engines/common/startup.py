"""What an engine refuses after its parser has accepted the command: cross-option rules
(one option requires another, two cannot go together) and names that only startup looks up
(tool-call and reasoning parsers, load formats, attention backends, ...), from the catalog.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan import HELP, Occurrence


def startup_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    final = final_values(occurrences)
    findings = _requirement_findings(catalog, final)
    findings += _conflict_findings(catalog, occurrences)
    findings += _registry_findings(catalog, final)
    return findings


def final_values(occurrences: Iterable[Occurrence]) -> dict[str, Occurrence]:
    """The occurrence that wins for each destination (the last one, as both parsers do)."""
    final: dict[str, Occurrence] = {}
    for occ in occurrences:
        if occ.spec is not HELP:
            final[occ.spec.dest] = occ
    return final


_SHELL_REFERENCE = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def is_shell_reference(value: str) -> bool:
    """``$NAME`` / ``${NAME}``: a placeholder the shell replaces before the engine sees it."""
    return bool(_SHELL_REFERENCE.match(value))




def _truthy(occ: Occurrence | None) -> bool:
    if occ is None or occ.negated:
        return False
    if not occ.spec.takes_value:
        return True
    value = occ.values[-1] if occ.values else occ.spec.const
    if occ.spec.optional and value in ("", "None"):
        return False
    return bool(value)


def _by_option(catalog: FlagCatalog, final: dict[str, Occurrence], option: str) -> Occurrence | None:
    spec = catalog.get(option)
    return final.get(spec.dest) if spec else None


def _requirement_findings(catalog: FlagCatalog, final: dict[str, Occurrence]) -> list[Finding]:
    out = []
    for rule in catalog.requirements:
        occ = _by_option(catalog, final, rule.flag)
        if not _truthy(occ):
            continue
        if rule.when_value is not None and occ and rule.when_value not in occ.values:
            continue
        missing = [r for r in rule.requires if not _truthy(_by_option(catalog, final, r))]
        if missing:
            out.append(Finding("error", "missing-requirement",
                               rule.message or f"{rule.flag} requires {' and '.join(missing)}",
                               f"add {' '.join(missing)}", location=rule.flag))
    return out


def _conflict_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    """Option strings the engine refuses together (as written, even when they are aliases)."""
    out = []
    written = {occ.option for occ in occurrences}
    for group in catalog.conflicts:
        present = [o for o in group if o in written]
        if len(present) > 1:
            out.append(Finding("error", "conflicting-options", f"{' and '.join(present)} cannot be used together",
                               f"keep only one of {', '.join(present)}", location=present[-1]))
    return out


def _registry_findings(catalog: FlagCatalog, final: dict[str, Occurrence]) -> list[Finding]:
    out = []
    for check in catalog.registry_checks:
        occ = _by_option(catalog, final, check.flag)
        if occ is None or not occ.values or not _truthy(occ) or is_shell_reference(occ.values[-1]):
            continue
        names = catalog.registries.get(check.registry, ())
        value = occ.values[-1]
        if not names or check.accepts(value, names):
            continue
        kind = check.registry.replace("_", " ").rstrip("s")
        near = difflib.get_close_matches(value, names, n=3, cutoff=0.5)
        fix = f"did you mean {' or '.join(near)}?" if near else f"known: {', '.join(names)}"
        active = check.only_with is None or _truthy(_by_option(catalog, final, check.only_with))
        plugin_occ = _by_option(catalog, final, check.plugin_flag) if check.plugin_flag else None
        # a plugin file or module is given; whether the file exists where the command runs is
        # the named-file check's (``servekit.engines.common.files``)
        plugin = _truthy(plugin_occ) and bool(plugin_occ.values and plugin_occ.values[-1])
        if active and plugin:
            out.append(Finding("warning", "plugin-name",
                               f"{check.flag} {value!r} is not built in; it must come from the {check.plugin_flag} "
                               "plugin", fix, location=check.flag))
        elif active:
            out.append(Finding("error", "unknown-" + check.registry.replace("_", "-").rstrip("s"),
                               f"{check.flag} {value!r}: {catalog.engine} {catalog.version} has no {kind} of "
                               "that name; startup fails", fix, location=check.flag))
        else:
            out.append(Finding("warning", "unused-option",
                               f"{check.flag} {value!r} is unknown but unused without {check.only_with}",
                               fix, location=check.flag))
    return out

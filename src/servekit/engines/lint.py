"""Check an engine command line against a pinned engine version's stored flag catalog.

``lint_argv(engine, version, argv)`` needs no engine installed. Errors are what the engine's
parser or its startup would refuse; warnings are what works but is fragile or surprising
(abbreviated option names, repeated options, deprecated flags, values the help does not list).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from servekit.engines.argscan import HELP, Occurrence, Scan, scan
from servekit.engines.findings import Finding, LintResult
from servekit.engines.flags import FlagCatalog, FlagSpec
from servekit.engines.valuecheck import check_value
from servekit.errors import ServekitError

__all__ = ["Finding", "LintResult", "check_args", "lint_argv", "lint_batch", "lint_shell"]


def check_args(catalog: FlagCatalog, args: Sequence[str]) -> list[Finding]:
    """Every finding for an option list (program and sub-command already removed)."""
    result = scan(catalog, list(args))
    findings = [_with_hint(catalog, f) for f in result.findings]
    findings += _occurrence_findings(catalog, result.occurrences)
    findings += _positional_findings(catalog, result)
    final = _final_values(result.occurrences)
    findings += _duplicate_findings(result.occurrences)
    findings += _requirement_findings(catalog, final)
    findings += _conflict_findings(catalog, result.occurrences)
    findings += _registry_findings(catalog, final)
    return findings


def closest_option(catalog: FlagCatalog, written: str) -> str | None:
    """The current option name nearest to ``written`` (a typo, a wrong dash count, an old name)."""
    name = written.split("=", 1)[0]
    if name in catalog.renamed:
        return catalog.renamed[name]
    bare: dict[str, str] = {}
    for option in catalog.names():
        bare.setdefault(option.lstrip("-"), option)
    key = name.lstrip("-").replace("_", "-")
    matches = difflib.get_close_matches(key, list(bare), n=1, cutoff=0.6)
    if not matches:
        return None
    option = bare[matches[0]]
    spec = catalog.get(option)
    return f"{option} ({spec.name})" if spec and spec.name != option and option != spec.negation else option


def _with_hint(catalog: FlagCatalog, finding: Finding) -> Finding:
    if finding.code != "unknown-option" or finding.option is None:
        return finding
    name = finding.option.split("=", 1)[0]
    if name in catalog.renamed:
        new = catalog.renamed[name]
        return Finding("error", "renamed-option",
                       f"{name} is not an option of {catalog.engine} {catalog.version}; it became {new}",
                       name, f"use {new}")
    near = closest_option(catalog, name)
    fix = f"did you mean {near}?" if near else "remove it; see the engine's --help for valid options"
    return Finding("error", "unknown-option", finding.message, name, fix)


def _occurrence_findings(catalog: FlagCatalog, occurrences: Iterable[Occurrence]) -> list[Finding]:
    out: list[Finding] = []
    looked_up = {c.flag for c in catalog.registry_checks}
    for occ in occurrences:
        spec = occ.spec
        if spec is HELP:
            out.append(Finding("error", "help-requested", f"{occ.written} prints help and exits", occ.written,
                               "remove it to start the server"))
            continue
        if occ.via_prefix:
            out.append(Finding(
                "warning", "abbreviated-option",
                f"{occ.written} only works as an abbreviation of {occ.option}; "
                "a future option with the same prefix breaks it", occ.written, f"write {occ.option}"))
        if spec.deprecated:
            out.append(Finding("warning", "deprecated-option", f"{occ.option} is deprecated", occ.option))
        for value in occ.values:
            if is_shell_reference(value):
                out.append(Finding("note", "shell-value", f"{occ.option} {value} is filled in by the shell; "
                                   "its value is not checked", occ.option))
                continue
            problem = check_value(spec, value)
            if problem:
                code = "bad-choice" if spec.choices and "is not one of" in problem else (
                    "bad-json" if spec.json_valued else "bad-type")
                out.append(Finding("error", code, f"{occ.option}: {problem}", occ.option, _value_fix(spec)))
            elif spec.suggested and value not in spec.suggested and spec.name not in looked_up:
                out.append(Finding("warning", "unlisted-value",
                                   f"{occ.option}: {value!r} is not among the documented values "
                                   f"({', '.join(spec.suggested)})", occ.option))
    return out


_SHELL_REFERENCE = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def is_shell_reference(value: str) -> bool:
    """``$NAME`` / ``${NAME}``: a placeholder the shell replaces before the engine sees it."""
    return bool(_SHELL_REFERENCE.match(value))


def plugin_available(value: str) -> bool:
    """A plugin is a Python file (it must exist here) or an importable module name (assumed present)."""
    if value.endswith(".py") or "/" in value:
        return Path(value).is_file()
    return bool(value)


def _value_fix(spec: FlagSpec) -> str | None:
    if spec.choices:
        shown = ", ".join(spec.choices[:12]) + (" ..." if len(spec.choices) > 12 else "")
        return f"use one of: {shown}"
    if spec.json_valued:
        return "quote the JSON for the shell, e.g. '{\"key\": 1}', with double quotes inside"
    return _TYPE_WORDS.get(spec.type)


_TYPE_WORDS = {
    "int": "give a whole number",
    "float": "give a number",
    "human_int": "give a whole number (1k = 1000 and 1K = 1024 also work)",
    "human_int_or_auto": "give a whole number, 1k / 1K style, or auto",
    "click_bool": "give true or false",
    "devices": "use cpu, gpu, gpu:all or gpu:0,1",
}


def _positional_findings(catalog: FlagCatalog, result: Scan) -> list[Finding]:
    allowed = len(catalog.positionals)
    extra = result.positionals[allowed:]
    if not extra:
        return []
    return [Finding("error", "unexpected-argument",
                    f"unexpected argument(s): {' '.join(extra)}", None,
                    "an option value is missing its option, or a value with spaces needs quoting")]


def _final_values(occurrences: Iterable[Occurrence]) -> dict[str, Occurrence]:
    """The occurrence that wins for each destination (the last one, as both parsers do)."""
    final: dict[str, Occurrence] = {}
    for occ in occurrences:
        if occ.spec is not HELP:
            final[occ.spec.dest] = occ
    return final


def _duplicate_findings(occurrences: Sequence[Occurrence]) -> list[Finding]:
    seen: dict[str, Occurrence] = {}
    out: list[Finding] = []
    for occ in occurrences:
        spec = occ.spec
        if spec is HELP or spec.multiple:
            continue
        before = seen.get(spec.dest)
        seen[spec.dest] = occ
        if before is None:
            continue
        same = before.values == occ.values and before.negated == occ.negated
        if same:
            out.append(Finding("warning", "repeated-option", f"{occ.option} is given twice with the same value",
                               occ.option, "drop one"))
        else:
            out.append(Finding("warning", "conflicting-duplicate",
                               f"{before.written} and {occ.written} set the same option differently; "
                               "the last one wins", occ.option, "keep only the one you mean"))
    return out


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
                               rule.flag, f"add {' '.join(missing)}"))
    return out


def _conflict_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    """Option strings the engine refuses together (as written, even when they are aliases)."""
    out = []
    written = {occ.option for occ in occurrences}
    for group in catalog.conflicts:
        present = [o for o in group if o in written]
        if len(present) > 1:
            out.append(Finding("error", "conflicting-options", f"{' and '.join(present)} cannot be used together",
                               present[-1], f"keep only one of {', '.join(present)}"))
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
        plugin = _truthy(plugin_occ) and plugin_available(plugin_occ.values[-1] if plugin_occ.values else "")
        if active and plugin:
            out.append(Finding("warning", "plugin-name",
                               f"{check.flag} {value!r} is not built in; it must come from the {check.plugin_flag} "
                               "plugin", check.flag, fix))
        elif active:
            out.append(Finding("error", "unknown-" + check.registry.replace("_", "-").rstrip("s"),
                               f"{check.flag} {value!r}: {catalog.engine} {catalog.version} has no {kind} of "
                               "that name; startup fails", check.flag, fix))
        else:
            out.append(Finding("warning", "unused-option",
                               f"{check.flag} {value!r} is unknown but unused without {check.only_with}",
                               check.flag, fix))
    return out


def lint_argv(engine: str, version: str | None, argv: Sequence[str]) -> LintResult:
    """Check ``argv`` (with or without its program prefix) for ``engine`` at ``version``."""
    from servekit.engines.registry import get_engine

    return get_engine(engine).lint(list(argv), version)


def lint_shell(engine: str, version: str | None, command: str) -> LintResult:
    """Like :func:`lint_argv` for a shell line (``\\`` line continuations allowed)."""
    try:
        argv = shlex.split(command.replace("\\\n", " "))
    except ValueError as exc:
        raise ServekitError(f"cannot split the command as a shell would: {exc}",
                            fix="check the quoting") from exc
    return lint_argv(engine, version, argv)


def lint_batch(lines: Iterable[str], version: str | None = None) -> list[dict[str, Any]]:
    """One result object per JSONL line {"engine": E, "command": SHELL_LINE}, in order."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict) or not isinstance(obj.get("command"), str):
                raise ServekitError('each line needs {"engine": ..., "command": "..."}')
            result = lint_shell(str(obj.get("engine", "vllm")), obj.get("version", version), obj["command"])
            out.append(result.to_dict())
        except (ValueError, ServekitError) as exc:
            out.append({"valid": False, "error": f"line {number}: {exc}", "findings": []})
    return out

"""Check an engine command line against a pinned engine version's stored flag catalog.

``lint_argv(engine, version, argv)`` needs no engine installed. Errors are what the engine's
parser or its startup would refuse; warnings are what works but is fragile or surprising
(abbreviated option names, repeated options, deprecated flags, values the help does not list).
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from servekit.engines.findings import Finding, LintResult
from servekit.engines.flags import FlagCatalog, FlagSpec
from servekit.engines.scan import HELP, Occurrence, Scan, scan
from servekit.engines.startup import is_shell_reference, startup_findings
from servekit.engines.valuecheck import check_value
from servekit.errors import ServekitError

__all__ = ["Finding", "LintResult", "check_args", "lint_argv", "lint_batch", "lint_shell"]


def check_args(catalog: FlagCatalog, args: Sequence[str]) -> list[Finding]:
    """Every finding for an option list (program and sub-command already removed)."""
    result = scan(catalog, list(args))
    findings = [_with_hint(catalog, f) for f in result.findings]
    findings += _occurrence_findings(catalog, result.occurrences)
    findings += _positional_findings(result)
    findings += _duplicate_findings(result.occurrences)
    findings += startup_findings(catalog, result.occurrences)
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


def _converted(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> set[int]:
    """Which occurrences the parser type-checks: argparse every one; click only the value that wins."""
    if catalog.style != "click":
        return set(range(len(occurrences)))
    last: dict[str, int] = {}
    for i, occ in enumerate(occurrences):
        last[occ.spec.dest] = i
    return {i for i, occ in enumerate(occurrences) if occ.spec.multiple or last[occ.spec.dest] == i}


def _occurrence_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence]) -> list[Finding]:
    out: list[Finding] = []
    looked_up = {c.flag for c in catalog.registry_checks}
    checked = _converted(catalog, occurrences)
    for index, occ in enumerate(occurrences):
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
        for value in occ.values if index in checked else ():
            if is_shell_reference(value):
                out.append(Finding("note", "shell-value", f"{occ.option} {value} is filled in by the shell; "
                                   "its value is not checked", occ.option))
                continue
            problem = check_value(spec, value)
            if problem:
                code = "bad-choice" if spec.choices and "is not one of" in problem else (
                    "unknown-key" if problem.startswith("unknown key") else
                    "bad-json" if spec.json_valued else "bad-type")
                out.append(Finding("error", code, f"{occ.option}: {problem}", occ.option,
                                   _value_fix(spec, problem)))
            elif spec.suggested and value not in spec.suggested and spec.name not in looked_up:
                out.append(Finding("warning", "unlisted-value",
                                   f"{occ.option}: {value!r} is not among the documented values "
                                   f"({', '.join(spec.suggested)})", occ.option))
    return out


def _value_fix(spec: FlagSpec, problem: str) -> str | None:
    if " does not take " in problem:
        return "give the key a value of a kind it takes (listed above)"
    if problem.startswith("unknown key"):
        return f"{spec.name} takes these keys: {', '.join(k for k in spec.json_fields or () if not k.startswith('_'))}"
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


def _positional_findings(result: Scan) -> list[Finding]:
    out = []
    loose = []
    for word in result.extras:
        if word.startswith("-") and " " in word:
            option, _, value = word.partition(" ")
            out.append(Finding("error", "option-and-value-in-one-word",
                               f"{word!r} is one word, so the parser cannot see the option {option}", option,
                               f"pass {option} and {value!r} as two words"))
        else:
            loose.append(word)
    if loose:
        out.append(Finding("error", "unexpected-argument", f"unexpected argument(s): {' '.join(loose)}", None,
                           "an option value is missing its option, or a value with spaces needs quoting"))
    return out


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
    """One result object per JSONL line {"engine": E, "command": SHELL_LINE} (or "argv": [...]), in order."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ServekitError('each line needs {"engine": ..., "command": "..."}')
            engine, chosen = str(obj.get("engine", "vllm")), obj.get("version", version)
            if isinstance(obj.get("argv"), list) and all(isinstance(w, str) for w in obj["argv"]):
                result = lint_argv(engine, chosen, obj["argv"])
            elif isinstance(obj.get("command"), str):
                result = lint_shell(engine, chosen, obj["command"])
            else:
                raise ServekitError('each line needs {"engine": ..., "command": "..."} (or "argv": [...])')
            out.append(result.to_dict())
        except (ValueError, ServekitError) as exc:
            out.append({"valid": False, "error": f"line {number}: {exc}", "findings": []})
    return out

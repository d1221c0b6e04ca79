"""Check an option list against a pinned engine version's stored flag catalog.

``check_args(catalog, args)`` needs no engine installed. Errors are what the engine's
parser or its startup would refuse; warnings are what works but is fragile or surprising
(abbreviated option names, repeated options, deprecated flags, values the help does not list).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.engines.common.scan import HELP, Occurrence, Scan, scan
from servekit.engines.common.startup import is_shell_reference, startup_findings
from servekit.engines.common.valuecheck import check_value

Respell = Callable[[str], "tuple[str, str] | None"]


def check_args(catalog: FlagCatalog, args: Sequence[str], respell: Respell | None = None) -> list[Finding]:
    """Every finding for an option list (program and sub-command already removed). ``respell(option)``
    gives (this release's spelling, the release that writes ``option``) for an option another stored
    release of the engine spells differently; its spelling is the fix before any near match."""
    result = scan(catalog, list(args))
    findings = [_with_hint(catalog, f, respell) for f in result.findings]
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
    return f"{option} ({spec.name})" if spec and spec.name != option and not spec.is_negation(option) else option


def _with_hint(catalog: FlagCatalog, finding: Finding, respell: Respell | None = None) -> Finding:
    if finding.code != "unknown-option" or finding.option is None:
        return finding
    name = finding.option.split("=", 1)[0]
    if name in catalog.renamed:
        new = catalog.renamed[name]
        return Finding("error", "renamed-option",
                       f"{name} is not an option of {catalog.engine} {catalog.version}; it became {new}",
                       f"use {new}", location=name)
    elsewhere = respell(name) if respell is not None else None
    if elsewhere is not None:
        here, release = elsewhere
        return Finding("error", "unknown-option",
                       f"{finding.message} ({name} is the {catalog.engine} {release} spelling; "
                       f"{catalog.version} writes {here})", f"write {here}", location=name)
    near = closest_option(catalog, name)
    fix = f"did you mean {near}?" if near else "remove it; see the engine's --help for valid options"
    return Finding("error", "unknown-option", finding.message, fix, location=name)


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
            out.append(Finding("error", "help-requested", f"{occ.written} prints help and exits",
                               "remove it to start the server", location=occ.written))
            continue
        if occ.via_prefix:
            out.append(Finding(
                "warning", "abbreviated-option",
                f"{occ.written} only works as an abbreviation of {occ.option}; "
                "a future option with the same prefix breaks it", f"write {occ.option}", location=occ.written))
        if spec.deprecated:
            out.append(Finding("warning", "deprecated-option", f"{occ.option} is deprecated", location=occ.option))
        for value in occ.values if index in checked else ():
            if is_shell_reference(value):
                out.append(Finding("note", "shell-value", f"{occ.option} {value} is filled in by the shell; "
                                   "its value is not checked", location=occ.option))
                continue
            problem = check_value(spec, value)
            if problem:
                code = "bad-choice" if spec.choices and "is not one of" in problem else (
                    "unknown-key" if problem.startswith("unknown key") else
                    "bad-json" if spec.json_valued else "bad-type")
                out.append(Finding("error", code, f"{occ.option}: {problem}", _value_fix(spec, problem),
                                   location=occ.option))
            elif spec.suggested and value not in spec.suggested and spec.name not in looked_up:
                out.append(Finding("warning", "unlisted-value",
                                   f"{occ.option}: {value!r} is not among the documented values "
                                   f"({', '.join(spec.suggested)})", location=occ.option))
    return out


def _value_fix(spec: FlagSpec, problem: str) -> str | None:
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
                               f"{word!r} is one word, so the parser cannot see the option {option}",
                               f"pass {option} and {value!r} as two words", location=option))
        else:
            loose.append(word)
    if loose:
        out.append(Finding("error", "unexpected-argument", f"unexpected argument(s): {' '.join(loose)}",
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
                               "drop one", location=occ.option))
        else:
            out.append(Finding("warning", "conflicting-duplicate",
                               f"{before.written} and {occ.written} set the same option differently; "
                               "the last one wins", "keep only the one you mean", location=occ.option))
    return out

"""What reading an option list produces: each option as the parser resolved it (:class:`Occurrence`),
the words the positionals took, the words nothing took, and findings for what the parser refuses."""

from __future__ import annotations

from dataclasses import dataclass, field

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.records import record

HELP = FlagSpec(name="--help", aliases=("-h",), dest="help", takes_value=False, type="bool")


@record
class Occurrence:
    """One option as the parser resolved it."""

    spec: FlagSpec
    written: str  # the word as the user wrote it (before any rewriting)
    option: str  # the option string it resolved to
    values: tuple[str, ...] = ()
    negated: bool = False
    via_prefix: bool = False
    from_dotted: bool = False


@dataclass
class Scan:
    """One command line read against an engine's flag catalog: what each word became, and the findings."""

    occurrences: list[Occurrence] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)  # words the command's positionals took
    extras: list[str] = field(default_factory=list)  # words nothing took: the parser refuses them
    findings: list[Finding] = field(default_factory=list)

    def error(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("error", code, message, fix, location=option))

    def warn(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("warning", code, message, fix, location=option))

"""Read an option list the way the engine's own parser would, using only its stored flag catalog.

The result is a :class:`Scan`: the options as the parser resolved them (:class:`Occurrence`),
the words the positionals took, the words nothing took, and findings for what the parser itself
refuses. ``argparse_scan`` follows vLLM (its rewriting, then Python's argparse); ``click_scan``
follows MAX (click). Value checks live in ``valuecheck``, startup-only rules in ``startup``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from servekit.engines.findings import Finding
from servekit.engines.flags import FlagCatalog, FlagSpec

HELP = FlagSpec(name="--help", aliases=("-h",), dest="help", takes_value=False, type="bool")


@dataclass(frozen=True)
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
    occurrences: list[Occurrence] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)  # words the command's positionals took
    extras: list[str] = field(default_factory=list)  # words nothing took: the parser refuses them
    findings: list[Finding] = field(default_factory=list)

    def error(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("error", code, message, option, fix))

    def warn(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("warning", code, message, option, fix))


def scan(catalog: FlagCatalog, args: list[str]) -> Scan:
    if catalog.style == "click":
        from servekit.engines.click_scan import scan_click

        return scan_click(catalog, list(args))
    from servekit.engines.argparse_scan import scan_argparse

    return scan_argparse(catalog, list(args))

"""What checking an engine command produces: findings (``servekit.findings.Finding``, about an
option when ``location`` names one), and the result that gathers them."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from servekit.findings import Finding, Severity
from servekit.records import record

__all__ = ["ERROR", "NOTE", "WARNING", "Finding", "LintResult", "Severity", "finding", "names_unknown_to_catalog"]

ERROR = "error"
WARNING = "warning"
NOTE = "note"

_CATALOG_NAME_CODES = frozenset({"renamed-option", "bad-choice", "bad-config-choice"})
"""Codes (besides ``unknown-*``) of findings that say a name is missing from the catalog checked."""


def names_unknown_to_catalog(finding: Finding) -> bool:
    """The finding says the catalog checked lacks a name: an option (``unknown-option``, or one it
    renamed), a JSON key (``unknown-key``, ``unknown-config-key``), a choice (``bad-choice``,
    ``bad-config-choice``) or a
    name startup looks up (``unknown-reasoning-parser``, ``unknown-attention-backend`` ...). Another
    release of the engine may well have it."""
    return finding.code.startswith("unknown-") or finding.code in _CATALOG_NAME_CODES


def finding(severity: str, code: str, message: str, *, option: str | None = None, fix: str | None = None) -> Finding:
    """A finding about ``option`` (a name on the command line), the form engine rules write."""
    return Finding(severity=severity, code=code, message=message, location=option, fix=fix)


@record
class LintResult:
    """Findings for one command against one engine version; valid means no error findings."""

    engine: str
    version: str
    argv: tuple[str, ...]
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def valid(self) -> bool:
        return not any(f.is_error for f in self.findings)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.is_error)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "engine": self.engine,
            "version": self.version,
            "findings": [f.lint_dict() for f in self.findings],
        }

"""A validation finding: what is wrong, where (file, line, column, key path) and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from servekit.errors import CatalogError, Location


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    severity: Severity
    location: Location
    message: str
    fix: str
    code: str
    """Stable short name of the rule that fired (``unknown-key``, ``unknown-hardware``, ...)."""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def render(self) -> str:
        """``file:line:col: key.path: message (fix: ...)``; warnings say so."""
        prefix = "warning: " if self.severity is Severity.WARNING else ""
        return f"{self.location}: {prefix}{self.message} (fix: {self.fix})"

    def to_json(self) -> dict[str, Any]:
        loc = self.location
        return {
            "severity": self.severity.value,
            "code": self.code,
            "file": loc.file,
            "line": loc.line,
            "column": loc.column,
            "key_path": loc.key(),
            "key_parts": list(loc.key_path),
            "message": self.message,
            "fix": self.fix,
        }

    @classmethod
    def from_error(cls, err: CatalogError, code: str) -> Finding:
        return cls(Severity.ERROR, err.location, err.message, err.fix or "fix the file", code)


def sort_key(finding: Finding) -> tuple:
    loc = finding.location
    return (loc.file, loc.line or 0, loc.column or 0, finding.severity.value, finding.message)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.is_error for f in findings)

"""What checking an engine command produces: findings (``servekit.findings.Finding``, about an
option when ``location`` names one), and the result that gathers them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servekit.findings import Finding, Severity

__all__ = ["Finding", "LintResult", "Severity"]


@dataclass(frozen=True)
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

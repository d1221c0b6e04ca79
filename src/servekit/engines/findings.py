"""What checking an engine command produces: findings, and the result that gathers them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Finding:
    """One problem (or remark) about a command line.

    ``code`` is stable and machine-readable (``unknown-option``, ``bad-choice``...);
    ``option`` is the option string the finding is about, when there is one;
    ``fix`` says what to change.
    """

    severity: Severity
    code: str
    message: str
    option: str | None = None
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"severity": self.severity, "code": self.code, "message": self.message}
        if self.option is not None:
            out["option"] = self.option
        if self.fix is not None:
            out["fix"] = self.fix
        return out

    def __str__(self) -> str:
        text = f"{self.severity}: {self.message}"
        return f"{text} (fix: {self.fix})" if self.fix else text


@dataclass(frozen=True)
class LintResult:
    """Findings for one command against one engine version; valid means no error findings."""

    engine: str
    version: str
    argv: tuple[str, ...]
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def valid(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "engine": self.engine,
            "version": self.version,
            "findings": [f.to_dict() for f in self.findings],
        }

"""A finding of a fit or "can it start" check: severity, stable code, message and the fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str
    fix: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)

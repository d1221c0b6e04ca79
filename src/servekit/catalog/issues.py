"""Problems found in one document, addressed by key path, before they get a file position."""

from __future__ import annotations

from dataclasses import dataclass

from servekit.catalog.findings import Finding, Severity
from servekit.catalog.positioned import KeyPath, PositionedDocument


@dataclass(frozen=True)
class Issue:
    severity: Severity
    key_path: KeyPath
    message: str
    fix: str
    code: str
    at_key: bool = False
    """Point at the mapping key itself (unknown or misnamed keys) rather than its value."""

    def locate(self, doc: PositionedDocument) -> Finding:
        where = doc.location(self.key_path, prefer_key=self.at_key)
        return Finding(self.severity, where, self.message, self.fix, self.code)


def error(key_path: KeyPath, message: str, fix: str, code: str, *, at_key: bool = False) -> Issue:
    return Issue(Severity.ERROR, tuple(key_path), message, fix, code, at_key)


def warning(key_path: KeyPath, message: str, fix: str, code: str, *, at_key: bool = False) -> Issue:
    return Issue(Severity.WARNING, tuple(key_path), message, fix, code, at_key)

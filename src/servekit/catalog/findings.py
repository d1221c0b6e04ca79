"""Catalog validation findings: ``servekit.findings.Finding`` positioned at a file ``Location``
(file, line, column, key path), their report order, and the finding of an unreadable file."""

from __future__ import annotations

from servekit.errors import CatalogError
from servekit.findings import Finding, Severity, has_errors

__all__ = ["Finding", "Severity", "from_error", "has_errors", "sort_key"]


def from_error(err: CatalogError, code: str) -> Finding:
    return Finding(Severity.ERROR, code, err.message, err.fix or "fix the file", err.location)


def sort_key(finding: Finding) -> tuple:
    loc = finding.location
    return (loc.file, loc.line or 0, loc.column or 0, finding.severity.value, finding.message)

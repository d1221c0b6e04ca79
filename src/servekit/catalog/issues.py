"""Findings in one document addressed by key path (``KeyPathLocation``), and their file position.

Reference and schema checks see plain data, so they point at key paths; ``locate`` turns such a
finding into one at a file ``Location`` (line and column of the key, or of its value).
"""

from __future__ import annotations

from dataclasses import replace

from servekit.catalog.positioned import KeyPath, PositionedDocument
from servekit.findings import Finding, KeyPathLocation, Severity


def error(key_path: KeyPath, message: str, fix: str, code: str, *, at_key: bool = False) -> Finding:
    return Finding(Severity.ERROR, code, message, fix, KeyPathLocation(tuple(key_path), at_key))


def warning(key_path: KeyPath, message: str, fix: str, code: str, *, at_key: bool = False) -> Finding:
    return Finding(Severity.WARNING, code, message, fix, KeyPathLocation(tuple(key_path), at_key))


def locate(finding: Finding, doc: PositionedDocument) -> Finding:
    """The finding at its file position in ``doc`` (one already positioned is returned as is)."""
    where = finding.location
    if not isinstance(where, KeyPathLocation):
        return finding
    return replace(finding, location=doc.location(where.key_path, prefer_key=where.at_key))

"""What every check servekit runs reports: one ``Finding`` (severity, code, message, fix, location).

Catalog validation, engine lint and translation, fit and "can it start" checks all produce
findings of this one type. ``location`` says what a finding is about, in whichever form the
check knows it:

- an option name of a command line (``--max-model-len``): ``Finding.option`` reads it;
- a ``KeyPathLocation``: a key path inside one document, before it has a file position;
- a ``servekit.errors.Location``: file, line, column and key path of a catalog file.

Each output surface has its own explicit renderer, so each keeps its shape:
``to_dict`` (fit and launch checks: ``fix`` always present), ``lint_dict`` (engine lint: no
``option`` or ``fix`` key when unset), ``to_json`` (catalog validation: file, line, column, key
path and its parts), ``render`` (one ``file:line:col: key: message (fix: ...)`` line) and
``str()`` (``severity: message (fix: ...)``).

``release`` names what a finding was checked against (``vllm 0.32.0``: the flag catalog of that
release), when a release decides it; every renderer above shows it when it is set.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from servekit.records import record

if TYPE_CHECKING:
    from servekit.errors import Location

KeyPath = tuple[str | int, ...]


class Severity(StrEnum):
    """How bad a finding is; compares equal to its value (``Severity.ERROR == "error"``)."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@record
class KeyPathLocation:
    """A place in one document by key path; ``at_key`` points at the mapping key itself (an
    unknown or misnamed key) rather than its value."""

    key_path: KeyPath
    at_key: bool = False


@record
class Finding:
    """One problem (or remark): ``code`` is stable and machine-readable (``unknown-option``,
    ``fit-weights``, ``unknown-hardware``...), ``fix`` says what to change."""

    severity: Severity
    code: str
    message: str
    fix: str | None = None
    location: str | KeyPathLocation | Location | None = None
    release: str | None = None
    """The engine release the finding was checked against (``vllm 0.32.0``), when one decides it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def option(self) -> str | None:
        """The command-line option the finding is about, when its location is one."""
        return self.location if isinstance(self.location, str) else None

    def __str__(self) -> str:
        text = f"{self.severity.value}: {self.message}"
        return f"{text} (fix: {self.fix})" if self.fix else text

    def render(self) -> str:
        """``<location>: [warning: ]message (fix: ...)``: one line of a catalog report."""
        prefix = "" if self.is_error else f"{self.severity.value}: "
        where = f"{self.location}: " if self.location is not None else ""
        return f"{where}{prefix}{self.message} (fix: {self.fix})"

    def to_dict(self) -> dict[str, Any]:
        """Severity, code, message and fix (null when there is none); ``release`` when set."""
        out = {"severity": self.severity.value, "code": self.code, "message": self.message, "fix": self.fix}
        if self.release is not None:
            out["release"] = self.release
        return out

    def lint_dict(self) -> dict[str, Any]:
        """Severity, code and message; ``option`` and ``fix`` only when set."""
        out: dict[str, Any] = {"severity": self.severity.value, "code": self.code, "message": self.message}
        if self.option is not None:
            out["option"] = self.option
        if self.fix is not None:
            out["fix"] = self.fix
        if self.release is not None:
            out["release"] = self.release
        return out

    def to_json(self) -> dict[str, Any]:
        """A positioned catalog finding: where (file, line, column, key path) and what."""
        loc = self.location
        if loc is None or isinstance(loc, (str, KeyPathLocation)):
            raise TypeError(f"finding {self.code!r} has no file position")
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


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.is_error for f in findings)

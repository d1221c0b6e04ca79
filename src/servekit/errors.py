"""The error types servekit raises for problems a user can fix.

Every expected failure is a ``ServekitError``; the surfaces (CLI, HTTP) turn one into a
single actionable line and a non-zero exit. Anything else is a bug.
"""

from __future__ import annotations

from dataclasses import field

from servekit.records import record


class ServekitError(Exception):
    """A problem the user can fix; ``str(err)`` is the one line to show."""

    exit_code = 1
    """The CLI's exit status for it."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})" if self.fix else self.message


class SelectionError(ServekitError):
    """The user's choices name something the catalog does not have or cannot combine."""


class ConflictError(SelectionError):
    """Two of the user's own requests contradict each other (``--feature X --no-feature X``);
    the CLI exits 2, as for any other misuse of its options."""

    exit_code = 2


@record
class Location:
    """Where in the catalog a finding points: file, 1-based line and column, key path."""

    file: str
    line: int | None = None
    column: int | None = None
    key_path: tuple[str | int, ...] = field(default_factory=tuple)

    def key(self) -> str:
        out = ""
        for part in self.key_path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        key = self.key()
        return f"{where}: {key}" if key else where


class CatalogError(ServekitError):
    """A catalog file cannot be read or fails validation; carries where and how to fix."""

    def __init__(self, message: str, *, location: Location, fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.location = location

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        return f"{text} (fix: {self.fix})" if self.fix else text

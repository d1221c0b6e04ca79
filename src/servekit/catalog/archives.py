"""Unpack a .tar(.gz) or .zip catalog archive without letting any member land outside the target.

Refused: absolute names, names with ``..``, links pointing outside the target, and anything that
is neither a file, a folder nor a link (devices, fifos).
"""

from __future__ import annotations

import posixpath
import tarfile
import zipfile
from pathlib import Path

from servekit.errors import ServekitError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


class UnsafeArchive(ServekitError):
    """An archive member would be written outside the folder it is unpacked into."""


def is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_kind(path: Path) -> str | None:
    """``tar`` or ``zip`` from the file's first bytes; None when it is neither."""
    with path.open("rb") as fh:
        head = fh.read(512)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar"
    return "tar" if len(head) >= 262 and head[257:262] == b"ustar" else None


def _check_name(archive: str, name: str) -> str:
    clean = name.replace("\\", "/")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":") or ".." in parts:
        raise UnsafeArchive(
            f"{archive}: member {name!r} would be written outside the folder it is unpacked into",
            fix="use an archive whose members all lie under one top folder",
        )
    return "/".join(parts)


def _check_link(archive: str, member: tarfile.TarInfo) -> None:
    base = posixpath.dirname(_check_name(archive, member.name))
    target = member.linkname if member.issym() else member.linkname.replace("\\", "/")
    joined = target if member.islnk() else posixpath.join(base, target)
    normal = posixpath.normpath(joined)
    if target.startswith("/") or normal == ".." or normal.startswith("../"):
        raise UnsafeArchive(
            f"{archive}: link {member.name!r} points outside the archive ({member.linkname})",
            fix="use an archive without links that leave its folder",
        )


def _extract_tar(archive: Path, target: Path) -> None:
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
            for member in members:
                _check_name(archive.name, member.name)
                if member.issym() or member.islnk():
                    _check_link(archive.name, member)
                elif not (member.isfile() or member.isdir()):
                    raise UnsafeArchive(
                        f"{archive.name}: member {member.name!r} is not a file or folder",
                        fix="use an archive of plain files",
                    )
            tar.extractall(target, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ServekitError(f"cannot unpack {archive.name}: {exc}", fix="check that the archive is complete") from None


def _extract_zip(archive: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                _check_name(archive.name, info.filename)
            zf.extractall(target)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ServekitError(f"cannot unpack {archive.name}: {exc}", fix="check that the archive is complete") from None


def extract_archive(archive: Path, target: Path) -> None:
    """Unpack ``archive`` (tar, tar.gz or zip, told apart by content) into ``target``."""
    kind = archive_kind(archive)
    if kind is None:
        raise ServekitError(
            f"{archive.name} is not a tar, tar.gz or zip archive",
            fix="give an archive of the catalog, a git URL or a directory",
        )
    target.mkdir(parents=True, exist_ok=True)
    (_extract_zip if kind == "zip" else _extract_tar)(archive, target)

"""How a build replaces the tree at ``--out``: whole versions only.

The next version of the tree is always prepared as a complete directory beside it (in the
state directory, ``servekit.api.output``) and swapped with it in one atomic step
(``servekit.api.swap``). So a reader that looks a path up finds the old version's file or the
new one's, ``--out`` never goes missing, and a build killed at any moment (SIGKILL included)
leaves the old tree or the new one in place, never a mix. The manifest (what the tree holds,
``servekit.api.manifest``) is removed before anything changes and written again by the caller
once the build is complete, so a build cut short is followed by a full build.

- ``commit_next`` (a full build): the mirror was made into the complete new version
  (``servekit.api.mirror.NextVersion``: files equal to the tree's stay links to them, only the
  others are written) and is swapped in; the previous tree becomes the mirror as it is, pending
  at the paths that differed. Without a previous tree the mirror is made again afterwards, of
  links to the new tree.
- ``staged`` + ``commit_full`` (``JsonTree.publish``): every file is written into a new stage
  directory, which is swapped in; the previous tree is removed, and the mirror with it.
- ``commit_delta`` (an incremental build): the mirror (equal to the tree but at the paths the
  previous build changed: ``pending``) is turned into the next version by changing only those
  paths and the ones this build writes or deletes, then swapped in. The previous tree becomes
  the mirror as it is: it differs from the new tree exactly at the paths this build changed
  (the next ``pending``). Nothing of a tree that was published changes before the next build
  begins, so a reader that opened the tree's directory once (a directory descriptor, a working
  directory) reads one whole version until then.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from servekit.api.mirror import mirror_all, update_paths
from servekit.api.output import STAGE_PREFIX, Output
from servekit.api.swap import exchange
from servekit.api.tree import ApiTreeError, check_target


@contextmanager
def staged(output: Output) -> Iterator[Path]:
    """A new, empty stage directory; whatever is left at its path afterwards is removed."""
    try:
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=output.state))
        os.chmod(stage, 0o755)
    except OSError as exc:
        raise ApiTreeError(f"cannot create a directory in {output.state}: {exc.strerror}",
                           fix="choose an --out directory whose parent is writable") from None
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def commit_full(output: Output, stage: Path) -> None:
    """Swap the complete tree in ``stage`` into place; the previous tree and the mirror go."""
    forget(output)
    _swap(stage, output)
    shutil.rmtree(stage, ignore_errors=True)  # the previous tree
    shutil.rmtree(output.mirror, ignore_errors=True)


def commit_next(output: Output) -> bool:
    """Swap the mirror, which holds the complete next version, into place (the manifest was
    removed before the mirror began to change, ``forget``); False when there was no tree, so
    the mirror was made again of links to the new one."""
    existed = os.path.lexists(output.path)
    _swap(output.mirror, output)
    if not existed:
        mirror_all(output.path, output.mirror)
    return existed


def commit_delta(output: Output, writes: Mapping[str, bytes], deletes: list[str],
                 pending: tuple[str, ...], files: set[str]) -> None:
    """Turn the mirror into the next version (``files`` in all: the tree's, but ``writes``
    with new bytes and ``deletes`` gone) and swap it into place."""
    forget(output)
    paths = sorted({*pending, *writes, *deletes})
    update_paths(output.path, output.mirror, paths, writes, files)
    _swap(output.mirror, output)


def forget(output: Output) -> None:
    """Remove the manifest: the tree or the mirror is about to change."""
    try:
        output.manifest.unlink(missing_ok=True)
    except OSError as exc:
        raise ApiTreeError(f"cannot remove {output.manifest}: {exc.strerror}",
                           fix="check permissions next to --out") from None


def _swap(new: Path, output: Output) -> None:
    check_target(output.path)
    try:
        exchange(new, output.path, output.retired)
    except OSError as exc:
        raise ApiTreeError(f"cannot move the new tree into {output.path}: {exc.strerror}",
                           fix="check permissions on it and its parent") from None

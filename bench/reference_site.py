"""The public recipes site's own API builder, run beside servekit in the build benchmarks.

The site (https://github.com/vllm-project/recipes) builds its JSON API with
``node scripts/build-recipes-api.mjs`` (``package.json``'s ``build`` script, first step), which
reads ``taxonomy.yaml``, ``platforms.yaml``, ``strategies/``, ``kv_store/``, ``models/`` and
``quickstart/`` from the working directory, imports ``../src/lib/*.js`` and js-yaml, and
writes every file under ``public/``. Nothing of that code is kept in this repository: the
benchmark takes the two folders from a local git copy of the site's repository (the
``fetch`` tool puts one at ``/work/.mirror/vllm-project+recipes/repo``; ``--reference-repo`` or
``$SERVEKIT_REFERENCE_RECIPES`` name another) into a temporary folder, links the catalog under
test into it, and installs js-yaml once into a cache folder outside the repository
(``$XDG_CACHE_HOME/servekit-bench/reference-node``), at the version the site's
``package.json`` asks for (``^4.1.1``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV_REPO = "SERVEKIT_REFERENCE_RECIPES"
FETCHED_REPO = Path("/work/.mirror/vllm-project+recipes/repo")
"""Where the ``fetch`` tool puts ``github:vllm-project/recipes`` (a bare git directory)."""
BUILDER = "scripts/build-recipes-api.mjs"
SOURCES = (BUILDER, "src/lib")
JS_YAML = "js-yaml@4.1.1"
"""The site's ``package.json`` asks for ``js-yaml ^4.1.1``."""
CATALOG_ENTRIES = ("taxonomy.yaml", "platforms.yaml", "strategies", "kv_store", "models", "quickstart")


class ReferenceUnavailable(Exception):
    """The reference builder cannot run here (no copy of the repository, no node, no npm)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "servekit-bench" / "reference-node"


def find_repo(explicit: Path | None) -> Path:
    for candidate in (explicit, os.environ.get(ENV_REPO), FETCHED_REPO):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    raise ReferenceUnavailable(
        f"no copy of github:vllm-project/recipes (looked at --reference-repo, ${ENV_REPO}, {FETCHED_REPO})"
    )


def node_modules() -> Path:
    """js-yaml in the cache folder, installed with npm the first time."""
    folder = cache_dir()
    if not (folder / "node_modules" / "js-yaml" / "package.json").is_file():
        if shutil.which("npm") is None:
            raise ReferenceUnavailable("npm is not installed (the reference builder needs js-yaml)")
        folder.mkdir(parents=True, exist_ok=True)
        print(f"installing {JS_YAML} into {folder} (once)")
        done = subprocess.run(["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                               "--silent", JS_YAML], capture_output=True, text=True)
        if done.returncode != 0:
            raise ReferenceUnavailable(f"npm install {JS_YAML} failed: {done.stderr.strip()[-400:]}")
    return folder / "node_modules"


@dataclass(frozen=True)
class ReferenceSite:
    """A working folder holding the reference builder and links to one catalog."""

    work: Path
    commit: str

    @property
    def public(self) -> Path:
        return self.work / "public"

    def build(self) -> None:
        """One full build (the builder has no other kind) into ``public/``."""
        done = subprocess.run(["node", BUILDER], cwd=self.work, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the reference builder failed ({done.returncode}): {done.stderr.strip()[-800:]}")

    def files(self) -> int:
        return sum(len(files) for _, _, files in os.walk(self.public))


def prepare(catalog: Path, repo: Path | None, parent: Path | None) -> ReferenceSite:
    """The reference builder of ``repo``'s newest commit, set up to build ``catalog``."""
    if shutil.which("node") is None:
        raise ReferenceUnavailable("node is not installed")
    source = find_repo(repo)
    modules = node_modules()
    work = Path(tempfile.mkdtemp(prefix="servekit-bench-ref-", dir=parent))
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        archive = subprocess.run(["git", "-C", str(source), "archive", "--format=tar", "HEAD", *SOURCES],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise ReferenceUnavailable(f"cannot take {', '.join(SOURCES)} from {source}: {exc}") from None
    os.symlink(modules, work / "node_modules")
    for name in CATALOG_ENTRIES:
        if (catalog / name).exists():
            os.symlink((catalog / name).resolve(), work / name)
    return ReferenceSite(work, commit)

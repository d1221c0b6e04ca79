"""Which of a model's facts are in the caches, and what is missing, without the network.

The facts of a hub model are its config.json (Hugging Face cache snapshot) and its safetensors
headers (``servekit.facts.header_cache``). The lookup follows the cache's documented layout
(``models--ORG--NAME/refs/REV`` -> ``snapshots/COMMIT``) and imports nothing heavy, so asking is cheap.
"""

from __future__ import annotations

import re
from pathlib import Path

from servekit.errors import ServekitError
from servekit.facts.header_cache import header_cache_file
from servekit.hfcache import hub_cache_dir

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class FactsNotFoundError(ServekitError, FileNotFoundError):
    """No config.json for a model, locally or in the Hugging Face cache."""


class FactsMissingError(FactsNotFoundError):
    """A hub model's facts are not cached and cannot be fetched now."""


def looks_like_repo_id(text: str) -> bool:
    """``ORG/NAME`` as the hub spells repository ids."""
    return bool(REPO_ID.match(text)) and ".." not in text


def snapshot_dir(repo_id: str, revision: str | None = None, cache: Path | None = None) -> Path | None:
    """The cached snapshot of ``repo_id`` at ``revision`` holding config.json, or None."""
    folder = (cache or hub_cache_dir()) / ("models--" + repo_id.replace("/", "--"))
    rev = revision or "main"
    commit = rev if _COMMIT.match(rev) else _read_ref(folder / "refs" / rev)
    if commit is None:
        return None
    snapshot = folder / "snapshots" / commit
    return snapshot if (snapshot / "config.json").is_file() else None


def _read_ref(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def has_cached_facts(repo_id: str, revision: str | None = None) -> bool:
    """config.json of ``repo_id`` is in the Hugging Face cache (cheap: no hub client import)."""
    return looks_like_repo_id(repo_id) and snapshot_dir(repo_id, revision) is not None


def missing_facts(repo_id: str, revision: str | None = None, cache: Path | None = None) -> list[str]:
    """What is not cached of a hub model's facts: ``config.json``, ``safetensors headers``."""
    snapshot = snapshot_dir(repo_id, revision, cache)
    if snapshot is None:
        return ["config.json", "safetensors headers"]
    if header_cache_file(repo_id, snapshot.name).is_file() or any(snapshot.glob("*.safetensors")):
        return []
    return ["safetensors headers"]


def missing_message(repo_id: str, revision: str | None = None) -> str:
    """One line: what is missing of ``repo_id``'s facts and the command that fetches them."""
    missing = missing_facts(repo_id, revision)
    rev = f" --revision {revision}" if revision else ""
    return (f"no cached model facts for {repo_id} (missing: {', '.join(missing)}); "
            f"fetch them with `servekit facts fetch {repo_id}{rev}`")

"""Download the selected files of a repo into the standard Hugging Face cache.

``huggingface_hub.snapshot_download`` does the work: it resolves the revision and writes
``refs/<revision>`` (so an engine started with ``HF_HUB_OFFLINE=1`` finds the snapshot from the
repo id), downloads in a thread pool to temp files renamed into place, resumes a dropped
connection with a ``Range`` request and never fetches a finished file twice. servekit only
narrows it to the exact files the engine loads and reports progress and bytes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from servekit.records import record
from servekit.warm.fetch_plan import RepoFetch
from servekit.warm.file_rules import literal_pattern
from servekit.warm.hub import HubError, HubSettings, call_hub

Advance = Callable[[int], None]


@record
class DownloadResult:
    repo_id: str
    commit: str
    snapshot: Path
    files_fetched: int
    bytes_fetched: int
    seconds: float


def progress_bridge(advance: Advance) -> type:
    """A tqdm-like class for ``snapshot_download`` that forwards received bytes to ``advance``.

    ``snapshot_download`` opens a byte-transfer bar ("Downloading ..."), a reconstruction bar and
    a file-count bar from the class it is given; only the transfer bar is forwarded, so the
    caller's own display (rich) shows one bar per repo.
    """

    class Bridge:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.total = kwargs.get("total")
            self.n = int(kwargs.get("initial") or 0)
            desc = str(kwargs.get("desc") or "")
            self._forward = kwargs.get("unit") == "B" and desc.startswith("Downloading")

        def update(self, n: int | float | None = 1) -> None:
            step = int(n or 0)
            self.n += step
            if self._forward and step:
                advance(step)

        @property
        def format_dict(self) -> dict:
            return {"rate": None, "n": self.n, "total": self.total}

        def __enter__(self) -> Bridge:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def _ignore(self, *args: object, **kwargs: object) -> None:
            return None

        close = refresh = set_description = set_description_str = set_postfix_str = set_postfix = _ignore

    return Bridge


def download(
    settings: HubSettings, fetch: RepoFetch, advance: Advance | None = None, workers: int = 8
) -> DownloadResult:
    """Fetch every selected file that is not cached yet (cached ones cost no request)."""
    from huggingface_hub import snapshot_download

    art = fetch.artifact
    patterns = [literal_pattern(f.path) for f in fetch.files]
    started = time.monotonic()

    def run() -> str:
        return snapshot_download(
            art.repo_id,
            revision=art.revision,
            cache_dir=settings.cache_dir,
            endpoint=settings.endpoint,
            token=settings.token,
            allow_patterns=patterns,
            max_workers=workers,
            tqdm_class=progress_bridge(advance or (lambda n: None)),
        )

    snapshot = Path(call_hub(run, art.repo_id, art.revision))
    seconds = time.monotonic() - started
    if fetch.commit and snapshot.name != fetch.commit:
        raise HubError(
            f"{art.repo_id}@{art.revision} moved from {fetch.commit[:12]} to {snapshot.name[:12]} during the download",
            fix="run warm-cache again",
        )
    missing = fetch.missing + tuple(f for f in fetch.files if f.path in fetch.prefetched)
    return DownloadResult(art.repo_id, snapshot.name, snapshot, len(missing), sum(f.size for f in missing), seconds)

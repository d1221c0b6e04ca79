"""What a MODEL argument names when it is not a recipe: a local checkpoint directory (or its
config.json), a Hugging Face id ``ORG/NAME``, or a Hugging Face URL
``https://huggingface.co/ORG/NAME[/tree/REV]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from servekit.errors import SelectionError
from servekit.facts.missing import looks_like_repo_id
from servekit.records import record

HUB_HOSTS = ("huggingface.co", "www.huggingface.co", "hf.co")


@record
class ModelRef:
    """A model as typed on the command line: a local directory or a hub repository."""

    text: str
    """What was typed."""
    kind: Literal["dir", "hub"]
    serve_name: str
    """The model as ``vllm serve`` takes it: the directory path or the repo id."""
    repo_id: str | None = None
    revision: str | None = None
    path: Path | None = None
    """The checkpoint directory of a local model."""

    @property
    def label(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "") if self.repo_id else self.serve_name


def hub_url_parts(text: str) -> tuple[str, str | None] | None:
    """``(repo id, revision)`` of a Hugging Face model URL, or None when ``text`` is no such URL."""
    url = urlsplit(text)
    if url.scheme not in ("http", "https") or url.netloc.lower() not in HUB_HOSTS:
        return None
    parts = [unquote(p) for p in url.path.strip("/").split("/") if p]
    if parts and parts[0] in ("models",):
        parts = parts[1:]
    if len(parts) < 2 or parts[0] in ("datasets", "spaces"):
        raise SelectionError(f"{text}: not a Hugging Face model URL",
                             fix="use https://huggingface.co/ORG/NAME or https://huggingface.co/ORG/NAME/tree/REV")
    repo_id, rest = f"{parts[0]}/{parts[1]}", parts[2:]
    revision = rest[1] if len(rest) >= 2 and rest[0] in ("tree", "blob", "resolve") else None
    return repo_id, (None if revision == "main" else revision)


def model_ref(text: str, revision: str | None = None) -> ModelRef:
    """The model a MODEL argument names; raises SelectionError when it names none."""
    from_url = hub_url_parts(text)
    if from_url is not None:
        repo_id, url_revision = from_url
        return ModelRef(text, "hub", repo_id, repo_id, revision or url_revision)
    path = Path(text).expanduser()
    if path.is_file() and path.name == "config.json":
        path = path.parent
    if path.is_dir():
        folder = path.resolve()
        return ModelRef(text, "dir", str(folder), path=folder)
    if looks_like_repo_id(text):
        return ModelRef(text, "hub", text, text, revision)
    raise SelectionError(
        f"{text!r} is not a recipe id, a checkpoint directory, a Hugging Face id (ORG/NAME) or URL",
        fix="run `servekit list` for recipe ids, or pass a directory holding config.json",
    )

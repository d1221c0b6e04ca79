"""What one verify or bench leaves behind: a record under ``home()/evidence/`` (plan hash, engine
and version, hardware, measured and predicted figures, probes or the load's comparison, timings),
written atomically."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from servekit import paths
from servekit.errors import ServekitError
from servekit.atomic import write_json_atomic

EVIDENCE_VERSION = 1


def evidence_dir() -> Path:
    return paths.home() / "evidence"


def write_evidence(doc: dict[str, Any]) -> Path:
    """Store ``doc`` (a verify or bench result with its context) as ``<time>-<run>.json``
    (``<time>-<run>-<kind>.json`` for a record that names its kind); returns the path."""
    kind = f"-{doc['kind']}" if doc.get("kind") else ""
    name = f"{time.strftime('%Y%m%d-%H%M%S')}-{doc.get('run') or 'url'}{kind}.json"
    path = evidence_dir() / name
    write_json_atomic(path, {"evidence_version": EVIDENCE_VERSION, **doc})
    return path


def read_evidence(path: Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ServekitError(f"evidence {path} cannot be read: {exc}") from None


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """The few lines a recipe keeps of one evidence record."""
    measured, predicted = doc.get("measured") or {}, doc.get("predicted") or {}
    out: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(doc.get("verified_at", time.time()))),
        "engine": f"{doc.get('engine')} {doc.get('engine_version')}".strip(),
        "hardware": (doc.get("hardware") or {}).get("name", "unknown"),
        "plan_hash": doc.get("plan_hash"),
        "ok": bool(doc.get("ok")),
        "probes": [p["name"] for p in doc.get("probes", []) if p.get("ok")],
    }
    if "kv_tokens" in measured:
        out["kv_tokens"] = {"measured": measured["kv_tokens"], "predicted": predicted.get("kv_tokens")}
    if "ready_seconds" in measured:
        out["ready_seconds"] = measured["ready_seconds"]
    return out

"""Where the shared reference material lies beside the checkout (read-only, never copied in)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REFERENCE = SHARED / "reference"
REFERENCE_CATALOG = REFERENCE / "catalog"

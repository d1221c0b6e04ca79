"""Read an option list the way the engine's own parser would, using only its stored flag catalog.

The result is a :class:`Scan` (``scan_result``). ``argparse_scan`` follows vLLM (its rewriting,
then Python's argparse); ``click_scan`` follows MAX (click). Value checks live in
``valuecheck``, startup-only rules in ``startup``.
"""

from __future__ import annotations

from servekit.engines.common.argparse_scan import scan_argparse
from servekit.engines.common.click_scan import scan_click
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan_result import HELP, Occurrence, Scan

__all__ = ["HELP", "Occurrence", "Scan", "scan"]


def scan(catalog: FlagCatalog, args: list[str]) -> Scan:
    if catalog.style == "click":
        return scan_click(catalog, list(args))
    return scan_argparse(catalog, list(args))

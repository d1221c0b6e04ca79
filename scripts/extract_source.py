"""Where an extracted catalog came from: the engine's distribution, and whether its environment is
whole or minimal (installed with ``--no-deps`` plus the few packages its argument modules import,
as scripts/install_parser_envs.sh builds for releases that cannot be installed whole here).

Standard library and ``packaging`` only: it runs inside the engine's environment.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterable
from typing import Any


def installed_distribution(names: Iterable[str]) -> str:
    """The first of ``names`` that is installed here."""
    for name in names:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return name
    raise SystemExit(f"none of {', '.join(names)} is installed in this interpreter")


def missing_requirements(dist: str, left_out: Iterable[str] = ()) -> list[str]:
    """The distribution's requirements for this platform that are not installed here."""
    from packaging.requirements import Requirement

    missing = set()
    for line in importlib.metadata.requires(dist) or []:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            missing.add(req.name)
    return sorted(missing - set(left_out))


def environment_facts(dist: str, left_out: Iterable[str] = ()) -> dict[str, Any]:
    """``distribution``, its version, ``environment`` (full | minimal) and what is missing; a minimal
    environment is announced on stderr."""
    missing = missing_requirements(dist, left_out)
    if missing:
        shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
        print(f"minimal environment: {dist} without {len(missing)} of its requirements ({shown}); "
              "the catalog comes from the parser alone", file=sys.stderr)
    return {
        "distribution": dist,
        "distribution_version": importlib.metadata.version(dist),
        "environment": "minimal" if missing else "full",
        "missing_requirements": missing,
        "python": sys.version.split()[0],
    }

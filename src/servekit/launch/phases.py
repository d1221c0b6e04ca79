"""The startup phases a server's log shows, in order: download, weights loaded, compile, KV cache
allocated, ready.

Each engine declares the line of each phase as a regex (``LaunchSpec.log_phases``); this module
only orders them and watches a log with them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from servekit.engines.common.engine import Engine
from servekit.engines.common.specs import (
    PHASE_COMPILE,
    PHASE_DOWNLOAD,
    PHASE_KV_CACHE,
    PHASE_READY,
    PHASE_WEIGHTS,
    PHASES,
)
from servekit.records import record

DOWNLOAD, WEIGHTS, COMPILE, KV_CACHE, READY = PHASE_DOWNLOAD, PHASE_WEIGHTS, PHASE_COMPILE, PHASE_KV_CACHE, PHASE_READY
ORDER = PHASES


@record
class PhaseMatcher:
    patterns: tuple[tuple[str, re.Pattern[str]], ...]

    def seen(self, text: str) -> list[str]:
        """The phases whose line appears in ``text``, in startup order."""
        return [name for name, pattern in self.patterns if pattern.search(text)]


def matcher(phases: Mapping[str, str]) -> PhaseMatcher:
    ordered = [(name, phases[name]) for name in ORDER if name in phases]
    ordered += [(name, rx) for name, rx in phases.items() if name not in ORDER]
    return PhaseMatcher(tuple((name, re.compile(rx)) for name, rx in ordered))


def engine_phases(engine: Engine) -> PhaseMatcher:
    """The phases ``engine``'s log shows, by its own regexes (none declared: only readiness is seen)."""
    return matcher(engine.launch.log_phases)

"""``servekit warm-cache``: fetch exactly what a plan's engines load, verify it, pre-compile.

Public entry points: :func:`warm_cache` (the whole flow), :func:`artifacts_from_argv` (which
repos a launch loads), :func:`plan_fetch` (which files of one repo), :func:`verify_repo`.
"""

from servekit.warm.artifacts import Artifact, artifacts_from_argv
from servekit.warm.engine_steps import EngineTarget, StepContext
from servekit.warm.fetch_plan import RepoFetch, plan_fetch
from servekit.warm.hub import HubSettings
from servekit.warm.runner import WarmOptions, WarmReport, warm_cache
from servekit.warm.verify import RepoVerification, verify_repo

__all__ = [
    "Artifact",
    "EngineTarget",
    "HubSettings",
    "RepoFetch",
    "RepoVerification",
    "StepContext",
    "WarmOptions",
    "WarmReport",
    "artifacts_from_argv",
    "plan_fetch",
    "verify_repo",
    "warm_cache",
]

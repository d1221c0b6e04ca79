"""The static JSON API: the catalog rendered into files, one per recipe, hardware and strategy."""

from servekit.api.build import BuildSummary, build_tree
from servekit.api.publish import build_api

__all__ = ["BuildSummary", "build_api", "build_tree"]

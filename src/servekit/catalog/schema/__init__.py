"""Typed models of every catalog document (pydantic); used by validation, not the fast path."""

from servekit.catalog.schema.base import Companion, Spec
from servekit.catalog.schema.feature import ArgsOverride, Feature, FeatureMode
from servekit.catalog.schema.recipe import (
    Dependency,
    HardwareNote,
    Meta,
    ModelSection,
    PlatformRef,
    Recipe,
)
from servekit.catalog.schema.strategy import KvStore, Strategy
from servekit.catalog.schema.strategy_override import PdRoleOverride, StrategyOverride
from servekit.catalog.schema.taxonomy import (
    HardwareProfile,
    KvOffloadGroup,
    KvOffloadOption,
    Platform,
    Platforms,
    Task,
    Taxonomy,
)
from servekit.catalog.schema.variant import HardwareOverride, InstallTabs, Variant

__all__ = [
    "ArgsOverride",
    "Companion",
    "Dependency",
    "Feature",
    "FeatureMode",
    "HardwareNote",
    "HardwareOverride",
    "HardwareProfile",
    "InstallTabs",
    "KvOffloadGroup",
    "KvOffloadOption",
    "KvStore",
    "Meta",
    "ModelSection",
    "PdRoleOverride",
    "Platform",
    "PlatformRef",
    "Platforms",
    "Recipe",
    "Spec",
    "Strategy",
    "StrategyOverride",
    "Task",
    "Taxonomy",
    "Variant",
]

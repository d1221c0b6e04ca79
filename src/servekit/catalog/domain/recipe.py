"""A recipe (``models/ORG/NAME.yaml``) as synthesis reads it, built once from the validated
document. ``raw`` keeps the document as written for outputs that publish it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.feature import Feature, features_of
from servekit.catalog.domain.hardware_block import block_map
from servekit.catalog.domain.install import Dependency, InstallTab
from servekit.catalog.domain.omni import Omni
from servekit.catalog.domain.strategy_override import NO_OVERRIDE, StrategyOverride
from servekit.catalog.domain.values import Doc, listing, mapping
from servekit.catalog.domain.variant import EMPTY_VARIANT, Variant


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RecipeMeta:
    """``meta``: the title, per-hardware support marks, the author's default hardware, the tasks."""

    title: Any
    hardware: Doc
    default_hardware: Any
    tasks: list[Any]

    @classmethod
    def of(cls, raw: Any) -> RecipeMeta:
        get = mapping(raw).get
        return cls(get("title"), mapping(get("hardware")), get("default_hardware"), listing(get("tasks")))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ModelSection:
    """``model``: the checkpoint, base arguments and env, version floor, image and install tabs,
    and the architecture and parameter count as the author describes them."""

    model_id: Any
    base_args: Any
    base_env: Any
    min_vllm_version: Any
    nightly_required: bool
    docker_image: Any
    install: Doc
    pip: InstallTab
    docker: InstallTab
    architecture: Any
    parameter_count: Any
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> ModelSection:
        doc = mapping(raw)
        get = doc.get
        install = mapping(get("install"))
        return cls(get("model_id"), get("base_args"), get("base_env"), get("min_vllm_version"),
                   get("nightly_required") is True, get("docker_image"), install, InstallTab.of(install.get("pip")),
                   InstallTab.of(install.get("docker")), get("architecture"), get("parameter_count"), doc)

    @property
    def docker_source_path(self) -> str | None:
        """``docker_source.mount_path``: a source checkout on the host that the container form
        mounts read-only and puts first on ``PYTHONPATH`` (newer code than the image carries)."""
        path = mapping(self.raw.get("docker_source")).get("mount_path")
        return path if isinstance(path, str) and path else None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Recipe:
    """One recipe. Maps and lists read as empty when absent; scalars stay as written."""

    meta: RecipeMeta
    model: ModelSection
    variants: dict[str, Variant]
    features: dict[str, Feature | None]
    opt_in_features: list[Any]
    hardware_opt_in_features: Doc
    compatible_strategies: list[Any]
    default_strategy: Any
    strategy_hardware: Doc
    strategy_min_gpus: Any
    strategy_overrides: dict[str, StrategyOverride]
    hardware_overrides: dict[str, Any]
    kv_offload_support: Doc
    kv_cache_strategy_hardware: Doc
    dependencies: list[Dependency]
    """The mapping entries of ``dependencies`` (other entries add nothing)."""
    omni: Omni
    raw: Doc

    @classmethod
    def of(cls, raw: Doc) -> Recipe:
        get = raw.get
        return cls(
            RecipeMeta.of(get("meta")), ModelSection.of(get("model")),
            {key: Variant.of(key, doc) for key, doc in mapping(get("variants")).items()},
            features_of(get("features")), listing(get("opt_in_features")),
            mapping(get("hardware_opt_in_features")), listing(get("compatible_strategies")),
            get("default_strategy"), mapping(get("strategy_hardware")), get("strategy_min_gpus"),
            {key: StrategyOverride.of(doc) for key, doc in mapping(get("strategy_overrides")).items()},
            block_map(get("hardware_overrides")), mapping(get("kv_offload_support")),
            mapping(get("kv_cache_strategy_hardware")), [Dependency.of(dep) for dep in listing(get("dependencies")) if isinstance(dep, dict)],
            Omni.of(get("omni")), raw,
        )

    def variant(self, key: str | None) -> Variant | None:
        return self.variants.get(key) if key is not None else None

    def variant_or_default(self, key: str) -> Variant:
        """The named variant; a missing, null or empty one reads as ``default`` (else empty)."""
        for name in (key, "default"):
            found = self.variants.get(name)
            if found is not None and not found.empty:
                return found
        return EMPTY_VARIANT

    def strategy_override(self, strategy: str) -> StrategyOverride:
        """``strategy_overrides.<strategy>`` (empty when the recipe has none for it)."""
        return self.strategy_overrides.get(strategy) or NO_OVERRIDE

    def hardware_mark(self, hw_id: str) -> Any:
        """``meta.hardware.<id>`` (``verified``, ``unsupported``, ...) or None."""
        return self.meta.hardware.get(hw_id)

    def modal_features(self) -> list[str]:
        """Keys of the features that declare modes."""
        return [key for key, feature in self.features.items() if feature is not None and feature.modes is not None]

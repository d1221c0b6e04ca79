"""Checks of a recipe's references to strategies, tasks, platforms, KV-offload options,
other recipes, and of its version fields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.version import InvalidVersion, Version

from servekit.catalog.issues import error, warning
from servekit.catalog.positioned import KeyPath
from servekit.catalog.vocabulary import CatalogVocabulary, as_list, as_map, sample, suggest
from servekit.findings import Finding

NIGHTLY = "nightly"


def version_issue(value: Any, at: KeyPath) -> Finding | None:
    """A vLLM version must parse with packaging.version; 'nightly' parses as nothing."""
    if not isinstance(value, str):
        return None
    if value.strip().lower() == NIGHTLY:
        return warning(
            at,
            "'nightly' is not a version number; version comparisons rank it below "
            "every release, so a higher requirement elsewhere silently wins",
            'write the lowest vLLM release that works (e.g. "0.28.0") and set '
            "model.nightly_required: true while it is unreleased",
            "bad-version",
        )
    try:
        Version(value)
    except InvalidVersion:
        return error(at, f"'{value}' is not a version number", 'write a version like "0.17.0"', "bad-version")
    return None


def _versions(recipe: dict) -> Iterator[Finding]:
    issue = version_issue(as_map(recipe.get("model")).get("min_vllm_version"), ("model", "min_vllm_version"))
    if issue:
        yield issue
    for vkey, variant in as_map(recipe.get("variants")).items():
        issue = version_issue(as_map(variant).get("min_vllm_version"), ("variants", vkey, "min_vllm_version"))
        if issue:
            yield issue


def _strategy_name(name: Any, allowed: frozenset[str], at: KeyPath, *, at_key: bool = False) -> Finding | None:
    if not isinstance(name, str) or name in allowed:
        return None
    return error(
        at,
        f"unknown strategy '{name}'{suggest(name, allowed)}",
        f"use a strategy from strategies/ ({sample(allowed)})",
        "unknown-strategy",
        at_key=at_key,
    )


def _strategies(recipe: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    serving = vocab.strategies
    deployable = vocab.strategies | vocab.kv_stores
    checks: list[Finding | None] = []
    compatible = as_list(recipe.get("compatible_strategies"))
    for i, name in enumerate(compatible):
        checks.append(_strategy_name(name, deployable, ("compatible_strategies", i)))
    default = recipe.get("default_strategy")
    checks.append(_strategy_name(default, serving, ("default_strategy",)))
    if isinstance(default, str) and default in serving and compatible and default not in compatible:
        checks.append(
            error(
                ("default_strategy",),
                f"default_strategy '{default}' is not in compatible_strategies",
                f"add '{default}' to compatible_strategies or choose one of them",
                "unknown-strategy",
            )
        )
    for name in as_map(recipe.get("strategy_overrides")):
        checks.append(_strategy_name(name, deployable, ("strategy_overrides", name), at_key=True))
    for name in as_map(recipe.get("strategy_hardware")):
        checks.append(_strategy_name(name, serving, ("strategy_hardware", name), at_key=True))
    for name in as_map(recipe.get("kv_cache_strategy_hardware")):
        if name not in vocab.kv_stores:
            checks.append(
                error(
                    ("kv_cache_strategy_hardware", name),
                    f"unknown kv_store deployment '{name}'{suggest(name, vocab.kv_stores)}",
                    f"use a deployment from kv_store/ ({sample(vocab.kv_stores)})",
                    "unknown-strategy",
                    at_key=True,
                )
            )
    for fkey, feature in as_map(recipe.get("features")).items():
        for i, name in enumerate(as_list(as_map(feature).get("strategies"))):
            checks.append(_strategy_name(name, serving, ("features", fkey, "strategies", i)))
    yield from (c for c in checks if c is not None)


def _meta(recipe: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    meta = as_map(recipe.get("meta"))
    for i, task in enumerate(as_list(meta.get("tasks"))):
        if isinstance(task, str) and vocab.tasks and task not in vocab.tasks:
            yield error(
                ("meta", "tasks", i),
                f"unknown task '{task}'{suggest(task, vocab.tasks)}",
                f"use a task id from taxonomy.yaml ({sample(vocab.tasks)})",
                "unknown-reference",
            )
    for i, platform in enumerate(as_list(meta.get("platforms"))):
        pid = as_map(platform).get("id") if isinstance(platform, dict) else platform
        at = ("meta", "platforms", i) + (("id",) if isinstance(platform, dict) else ())
        if isinstance(pid, str) and pid not in vocab.platforms:
            yield error(
                at,
                f"unknown platform '{pid}'{suggest(pid, vocab.platforms)}",
                f"use a platform id from platforms.yaml ({sample(vocab.platforms)})"
                if vocab.platforms
                else "add the platform to platforms.yaml",
                "unknown-reference",
            )
    for i, rid in enumerate(as_list(meta.get("related_recipes"))):
        if isinstance(rid, str) and vocab.recipes and rid.lower() not in vocab.recipes:
            yield warning(
                ("meta", "related_recipes", i),
                f"related recipe '{rid}' is not in this catalog, so its link leads nowhere",
                "use the ORG/NAME of a recipe under models/, or remove it",
                "unknown-reference",
            )


def _kv_offload(recipe: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    for key in as_map(recipe.get("kv_offload_support")):
        if key not in vocab.kv_offload:
            yield error(
                ("kv_offload_support", key),
                f"unknown KV-offload option '{key}'{suggest(key, vocab.kv_offload)}",
                f"use an option from taxonomy.yaml kv_offload ({sample(vocab.kv_offload)})",
                "unknown-reference",
                at_key=True,
            )


def reference_issues(recipe: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    yield from _versions(recipe)
    yield from _strategies(recipe, vocab)
    yield from _meta(recipe, vocab)
    yield from _kv_offload(recipe, vocab)

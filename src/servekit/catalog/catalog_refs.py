"""Checks of the shared documents: taxonomy.yaml, strategies/ and kv_store/."""

from __future__ import annotations

from collections.abc import Iterator

from servekit.catalog.issues import error, warning
from servekit.catalog.recipe_refs import version_issue
from servekit.catalog.vocabulary import CatalogVocabulary, as_list, as_map, sample, suggest
from servekit.findings import Finding


def taxonomy_issues(taxonomy: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    hw = vocab.hardware
    listed = as_list(taxonomy.get("strategies"))
    for i, name in enumerate(listed):
        if isinstance(name, str) and name not in vocab.strategies:
            yield error(
                ("strategies", i),
                f"unknown strategy '{name}'{suggest(name, vocab.strategies)}",
                "add strategies/<name>.yaml or remove it from the list",
                "unknown-strategy",
            )
    if listed:
        for name in sorted(vocab.strategies - {n for n in listed if isinstance(n, str)}):
            yield warning(
                ("strategies",),
                f"strategy '{name}' has a file in strategies/ but is not listed here",
                f"add '- {name}' to the strategies list",
                "unlisted-strategy",
                at_key=True,
            )
    seen_tasks: set[str] = set()
    for i, task in enumerate(as_list(taxonomy.get("tasks"))):
        tid = as_map(task).get("id")
        if isinstance(tid, str) and tid in seen_tasks:
            yield error(
                ("tasks", i, "id"),
                f"task id '{tid}' is defined twice",
                "give each task its own id",
                "duplicate-name",
            )
        if isinstance(tid, str):
            seen_tasks.add(tid)
    groups = as_map(taxonomy.get("kv_offload_groups"))
    for key, option in as_map(taxonomy.get("kv_offload")).items():
        option = as_map(option)
        at = ("kv_offload", key)
        group = option.get("group")
        if isinstance(group, str) and group not in groups:
            yield error(
                at + ("group",),
                f"unknown kv_offload group '{group}'{suggest(group, groups)}",
                "define it under kv_offload_groups or fix the name",
                "unknown-reference",
            )
        for i, brand in enumerate(as_list(option.get("brands"))):
            if isinstance(brand, str) and brand.lower() not in hw.brands:
                yield error(
                    at + ("brands", i),
                    f"unknown brand '{brand}'{suggest(brand.lower(), hw.brands)}",
                    f"use a hardware profile brand ({sample(hw.brands)})",
                    "unknown-hardware",
                )
        for i, name in enumerate(as_list(option.get("strategies"))):
            if isinstance(name, str) and name not in vocab.strategies:
                yield error(
                    at + ("strategies", i),
                    f"unknown strategy '{name}'{suggest(name, vocab.strategies)}",
                    f"use a strategy from strategies/ ({sample(vocab.strategies)})",
                    "unknown-strategy",
                )


def kv_store_issues(doc: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    issue = version_issue(doc.get("min_vllm_version"), ("min_vllm_version",))
    if issue:
        yield issue
    for brand in as_map(as_map(doc.get("vllm")).get("install")):
        if brand not in vocab.hardware.brands:
            yield error(
                ("vllm", "install", brand),
                f"unknown brand key '{brand}'{suggest(brand, vocab.hardware.brands)}",
                f"key install commands by a lower-case brand ({sample(vocab.hardware.brands)})",
                "unknown-hardware",
                at_key=True,
            )
    name = doc.get("name")
    if isinstance(name, str) and name in vocab.strategies:
        yield error(
            ("name",),
            f"kv_store deployment '{name}' has the same name as a serving strategy",
            "rename one of them; ids must be unique across strategies/ and kv_store/",
            "duplicate-name",
        )


def strategy_issues(doc: dict) -> Iterator[Finding]:
    """A strategy's own consistency: GPU bounds, and the parts its deploy type needs."""
    match = as_map(doc.get("hardware_match"))
    low, high = match.get("min_gpus"), match.get("max_gpus")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        yield error(
            ("hardware_match", "max_gpus"),
            f"max_gpus {high} is below min_gpus {low}",
            "make max_gpus at least min_gpus",
            "bad-value",
        )
    deploy = doc.get("deploy_type")
    if deploy == "pd_cluster":
        for role in ("prefill", "decode"):
            if not isinstance(doc.get(role), dict):
                yield error(
                    (role,),
                    f"a pd_cluster strategy needs a '{role}' section",
                    f"add '{role}:' with its vllm_args and env",
                    "missing-key",
                    at_key=True,
                )
    elif deploy in ("single_node", "multi_node"):
        for role in ("prefill", "decode"):
            if role in doc:
                yield warning(
                    (role,),
                    f"'{role}' is only read for pd_cluster strategies",
                    f"remove '{role}' or set deploy_type: pd_cluster",
                    "unused-key",
                    at_key=True,
                )
    if doc.get("parallelism") is not None and deploy != "multi_node":
        yield error(
            ("parallelism",),
            "parallelism (tp_pp / tp_dp) only applies to multi_node strategies",
            "remove it or set deploy_type: multi_node",
            "bad-value",
            at_key=True,
        )

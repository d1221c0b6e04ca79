"""The catalog-wide documents of the API: vocabulary, platforms, strategies, quickstarts.

They are published as authored (dates as ISO strings); KV-store deployments are published
apart from the serving strategies, under ``kv_store``.
"""

from __future__ import annotations

from pathlib import Path

from servekit.api.tree import JsonTree
from servekit.catalog.documents import CatalogDocuments, read_yaml


def quickstarts(root: Path) -> list[dict]:
    """``quickstart/*.yaml`` documents, each keyed by its ``hardware_profile``."""
    folder = root / "quickstart"
    if not folder.is_dir():
        return []
    docs = [read_yaml(p) for p in sorted(folder.glob("*.yaml"))]
    return [d for d in docs if isinstance(d, dict) and d.get("hardware_profile")]


def put_static_documents(tree: JsonTree, docs: CatalogDocuments) -> None:
    tree.put("taxonomy.json", docs.taxonomy)
    if "platforms" in docs.sources:
        tree.put("platforms.json", docs.platforms)
    for name, doc in docs.strategies.items():
        tree.put(f"strategies/{name}.json", doc)
    tree.put("strategies.json", docs.strategies)
    for name, doc in docs.kv_store.items():
        tree.put(f"kv_store/{name}.json", doc)
    tree.put("kv_store.json", docs.kv_store)
    for doc in quickstarts(docs.root):
        tree.put(f"quickstart/{doc['hardware_profile']}.json", doc)

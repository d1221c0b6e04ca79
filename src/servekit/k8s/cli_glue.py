"""What ``servekit plan ... --format k8s`` needs: options from its flags, and the text to print."""

from __future__ import annotations

from typing import Any

from servekit.errors import SelectionError
from servekit.k8s.options import K8sOptions
from servekit.k8s.text import render_k8s_text

FORMAT = "k8s"


def options_from_cli(namespace: str | None = None, name: str | None = None, storage_class: str | None = None,
                     cache_size: str | None = None, warm_cache: str | None = None) -> K8sOptions:
    """K8sOptions from the ``servekit plan`` flags (None = the default)."""
    given = {"namespace": namespace, "name": name, "storage_class": storage_class, "cache_size": cache_size,
             "warm_cache": warm_cache}
    return K8sOptions(**{k: v for k, v in given.items() if v is not None})


def hardware_profile(hardware: str, catalog: str | None = None) -> Any:
    """The taxonomy profile of ``hardware`` in the catalog the plan came from."""
    from servekit.catalog.documents import read_documents, resolve_catalog_dir

    docs = read_documents(resolve_catalog_dir(catalog), only_recipes=[])
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(hardware)
    if profile is None:
        raise SelectionError(f"unknown hardware {hardware!r} in the catalog's taxonomy",
                             fix="use a hardware id from hardware_profiles in the catalog's taxonomy.yaml")
    return profile


def plan_k8s_text(plan: Any, options: K8sOptions, *, catalog: str | None = None, profile: Any = None) -> str:
    """The YAML documents for ``plan`` (the profile is read from the catalog unless given)."""
    chosen = profile if profile is not None else hardware_profile(plan.selection.hardware, catalog)
    return render_k8s_text(plan, chosen, options)

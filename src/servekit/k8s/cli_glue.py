"""What ``servekit plan ... --format k8s`` takes from its flags."""

from __future__ import annotations

from servekit.k8s.options import K8sOptions


def options_from_cli(namespace: str | None = None, name: str | None = None, storage_class: str | None = None,
                     cache_size: str | None = None, warm_cache: str | None = None) -> K8sOptions:
    """K8sOptions from the ``servekit plan`` flags (None = the default)."""
    given = {"namespace": namespace, "name": name, "storage_class": storage_class, "cache_size": cache_size,
             "warm_cache": warm_cache}
    return K8sOptions(**{k: v for k, v in given.items() if v is not None})

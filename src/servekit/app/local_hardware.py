"""Hardware ``local``: this machine, as a taxonomy-shaped entry beside the catalog's profiles.

``plan MODEL --hardware local`` plans for the machine servekit runs on (its CPU and memory, or
its GPUs), as ``up`` does; every other name is a profile of the catalog's taxonomy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.launch.machine import LOCAL, LocalMachine, detect


@lru_cache(maxsize=1)
def this_machine() -> LocalMachine:
    return detect()


def hardware_entry(docs: CatalogDocuments, name: str) -> dict[str, Any] | None:
    """The taxonomy entry of ``name`` (``local``: this machine's); None when there is none."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if name == LOCAL:
        return this_machine().fit_profile(profiles)  # GPUs take the facts of their model's entry
    return profiles.get(name)


def local_note() -> str:
    machine = this_machine()
    what = (f"{len(machine.gpus)} x {machine.gpus[0].name}" if machine.gpus
            else f"{machine.cpu_model}, {machine.logical_cpus} CPUs, {machine.memory_gib:.0f} GiB")
    return f"hardware: local (this machine: {what})"

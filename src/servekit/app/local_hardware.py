"""Hardware ``local``: this machine, as a taxonomy-shaped entry beside the catalog's profiles.

``plan MODEL --hardware local`` plans for the machine servekit runs on (its CPU and memory, or
its GPUs), as ``up`` does, whether MODEL is a recipe (``with_local``) or a model no recipe names;
every other name is a profile of the catalog's taxonomy.
"""


from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from servekit.catalog.documents import CatalogDocuments
from servekit.hardware import LOCAL
from servekit.synthesis.resolve import unknown_name

if TYPE_CHECKING:
    from servekit.launch.machine import LocalMachine


@lru_cache(maxsize=1)
def this_machine() -> LocalMachine:
    # imported here, from a lower layer, for laziness: only a plan for hardware local reads the machine
    from servekit.launch.machine import detect

    return detect()


def hardware_entry(docs: CatalogDocuments, name: str) -> dict[str, Any] | None:
    """The taxonomy entry of ``name`` (``local``: this machine's); None when there is none."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if name == LOCAL:
        return this_machine().fit_profile(profiles)  # GPUs take the facts of their model's entry
    return profiles.get(name)


def with_local(docs: CatalogDocuments, name: str | None) -> CatalogDocuments:
    """``docs`` with this machine as hardware ``local`` when ``name`` asks for it (a recipe's plan
    resolves, lays out and checks against that entry, as ``up`` does); else ``docs`` unchanged.
    A catalog's own ``local`` profile is kept; a name that is neither is refused with ``local``
    among the choices, as a plan without a recipe refuses it."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if name is None or name in profiles:
        return docs
    if name != LOCAL:
        raise unknown_name("hardware", name, [LOCAL, *profiles])
    from servekit.launch.machine import with_this_machine  # lower layer; only hardware local needs it

    return with_this_machine(docs, this_machine())


def local_note() -> str:
    machine = this_machine()
    what = (f"{len(machine.gpus)} x {machine.gpus[0].name}" if machine.gpus
            else f"{machine.cpu_model}, {machine.logical_cpus} CPUs, {machine.memory_gib:.0f} GiB")
    return f"hardware: local (this machine: {what})"

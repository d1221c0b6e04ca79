"""Hardware ``local``: this machine, as a taxonomy-shaped entry beside the catalog's profiles.

``plan MODEL --hardware local`` plans for the machine servekit runs on (its CPU and memory, or
its GPUs), as ``up`` does, whether MODEL is a recipe (``with_local``) or a model no recipe names;
every other name is a profile of the catalog's taxonomy, or a GPU of the device table
(``servekit.app.part_hardware``: ``l4``, ``a10_2x``), added beside the catalog's profiles.
"""


from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from servekit.app.part_hardware import part_entry, part_ids
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
    A catalog's own ``local`` profile is kept. A GPU of the device table (``part_entry``) is added
    the same way; a name that is none of these is refused with ``local`` and the parts among the
    choices, as a plan without a recipe refuses it."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if name is None or name in profiles:
        return docs
    if name != LOCAL:
        entry = part_entry(name)
        if entry is None:
            raise unknown_name("hardware", name, [LOCAL, *profiles, *(p for p in part_ids() if p not in profiles)])
        return replace(docs, taxonomy={**docs.taxonomy, "hardware_profiles": {**profiles, name: entry}}, typed={})
    from servekit.launch.machine import with_this_machine  # lower layer; only hardware local needs it

    return with_this_machine(docs, this_machine())


def local_note() -> str:
    machine = this_machine()
    what = (f"{len(machine.gpus)} x {machine.gpus[0].name}" if machine.gpus
            else f"{machine.cpu_model}, {machine.logical_cpus} CPUs, {machine.memory_gib:.0f} GiB")
    return f"hardware: local (this machine: {what})"

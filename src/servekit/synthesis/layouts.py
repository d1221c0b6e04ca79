"""The parallel layouts a recipe can take on one hardware, fewest devices first.

``servekit.app.layout`` walks them when the recipe's default layout does not fit the
hardware's memory, and names the first that does. Pure rules over the typed recipe, the
taxonomy profile and the strategies (``servekit.synthesis.selection``).
"""

from __future__ import annotations

from servekit.catalog.domain import Recipe, Strategy
from servekit.records import record
from servekit.synthesis.selection import MAX_NODES, Profile, gpu_count, nodes_for_strategy, offered_strategies


@record
class Layout:
    """A parallel layout: a serving strategy, its node count, and (``single_node_tp`` only) a
    tensor-parallel size other than the recipe's rule; ``devices`` is how many it occupies."""

    strategy: str
    nodes: int
    tp: int | None
    devices: int

    def describe(self) -> str:
        size = f" at TP {self.tp}" if self.tp is not None else (f" on {self.nodes} nodes" if self.nodes > 1 else "")
        return f"{self.strategy}{size} ({self.devices} device{'s' if self.devices != 1 else ''})"

    def options(self) -> str:
        """The ``servekit plan`` options that ask for this layout."""
        nodes = f" --nodes {self.nodes}" if self.nodes > 1 else ""
        return f"--strategy {self.strategy}{nodes}" + (f" --tp {self.tp}" if self.tp is not None else "")


def _tp_sizes(devices: int) -> list[int]:
    """1, 2, 4 ... up to ``devices``, and ``devices`` itself."""
    sizes = [1 << k for k in range(devices.bit_length()) if 1 << k <= devices]
    return sizes + ([devices] if devices not in sizes else [])


def parallel_layouts(recipe: Recipe, profile: Profile, hw_id: str, strategies: dict[str, Strategy],
                     first: str | None = None) -> list[Layout]:
    """Every layout the recipe's offered strategies can take on this hardware, fewest devices
    first (``first``'s, then offer order, among equals): ``single_node_tp`` at each TP size up to
    the node's devices, other single-node strategies on the whole node, multi-node strategies on
    2 (or their ``strategy_min_gpus`` floor) to ``MAX_NODES`` nodes. PD and KV-store
    deployments size their pools by their own rules and are not among them."""
    gpus = gpu_count(profile, 0) or 1
    offered = offered_strategies(recipe, profile, hw_id, strategies)
    offered.sort(key=lambda name: name != first)
    out: list[Layout] = []
    for name in offered:
        deploy_type = doc.deploy_type if (doc := strategies.get(name)) is not None else "single_node"
        if name == "single_node_tp":
            out += [Layout(name, 1, size, size) for size in _tp_sizes(gpus)]
        elif deploy_type == "single_node":
            out.append(Layout(name, 1, None, gpus))
        elif deploy_type == "multi_node":
            floor = max(2, nodes_for_strategy(recipe, name, gpus, hw_id))
            out += [Layout(name, nodes, None, gpus * nodes) for nodes in range(floor, MAX_NODES + 1)]
    return sorted(out, key=lambda layout: layout.devices)

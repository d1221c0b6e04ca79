"""YAML for ``kubectl apply -f -``: documents separated by ``---``, notes as leading comments."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from servekit.k8s.manifests import Manifests, build_manifests
from servekit.k8s.options import K8sOptions


def dump_documents(docs: Iterable[Mapping[str, Any]]) -> str:
    """Block-style YAML, keys in the order they were built, no anchors or aliases."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False
    yaml.width = 4096
    yaml.representer.ignore_aliases = lambda *_: True
    yaml.explicit_start = True
    out = io.StringIO()
    yaml.dump_all([dict(d) for d in docs], out)
    return out.getvalue()


def manifests_text(manifests: Manifests, header: Iterable[str] = ()) -> str:
    lines = [f"# {line}" for line in header] + [f"# note: {note}" for note in manifests.notes]
    prefix = "\n".join(lines) + "\n" if lines else ""
    return prefix + dump_documents(manifests.documents)


def render_k8s_text(plan: Any, profile: Any, options: K8sOptions | None = None) -> str:
    """The text ``servekit plan ... --format k8s`` prints for ``plan``."""
    sel = plan.selection
    header = [f"servekit plan {sel.recipe_id} --hardware {sel.hardware} --variant {sel.variant} "
              f"--strategy {sel.strategy}" + (f" --nodes {sel.node_count}" if sel.node_count > 1 else ""),
              "apply with: kubectl apply -f -  (servekit applies nothing itself)"]
    return manifests_text(build_manifests(plan, profile, options), header)

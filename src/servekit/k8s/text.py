"""YAML for ``kubectl apply -f -``: documents separated by ``---``, notes as leading comments."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.representer import SafeRepresenter

from servekit.k8s.cache import RepoDownload
from servekit.k8s.manifests import Manifests, build_manifests
from servekit.k8s.options import K8sOptions


class _Representer(SafeRepresenter):
    """Multi-line text (a script, a JSON config) as a literal block, readable as written."""

    def represent_str(self, data: str) -> Any:
        style = "|" if "\n" in data else None
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Representer.add_representer(str, _Representer.represent_str)


def dump_documents(docs: Iterable[Mapping[str, Any]]) -> str:
    """Block-style YAML, keys in the order they were built, no anchors or aliases."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Representer = _Representer
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False
    yaml.width = 4096
    yaml.representer.ignore_aliases = lambda *_: True
    yaml.explicit_start = True
    out = io.StringIO()
    yaml.dump_all([dict(d) for d in docs], out)
    return out.getvalue()


def manifests_text(manifests: Manifests, header: Iterable[str] = ()) -> str:
    """Header, findings and notes as comments, then the documents."""
    lines = [f"# {line}" for line in header] + [f"# {finding}" for finding in manifests.findings]
    lines += [f"# note: {note}" for note in manifests.notes]
    prefix = "\n".join(lines) + "\n" if lines else ""
    return prefix + dump_documents(manifests.documents)


def plan_header(plan: Any) -> list[str]:
    sel = plan.selection
    return [f"servekit plan {sel.recipe_id} --hardware {sel.hardware} --variant {sel.variant} "
            f"--strategy {sel.strategy}" + (f" --nodes {sel.node_count}" if sel.node_count > 1 else "")
            + (f" --engine {sel.engine}" if sel.engine != "vllm" else ""),
            "apply with: kubectl apply -f -  (servekit applies nothing itself)"]


def render_k8s_text(plan: Any, profile: Any, options: K8sOptions | None = None,
                    downloads: Sequence[RepoDownload] = ()) -> str:
    """The text ``servekit plan ... --format k8s`` prints for ``plan``."""
    return manifests_text(build_manifests(plan, profile, options, downloads), plan_header(plan))

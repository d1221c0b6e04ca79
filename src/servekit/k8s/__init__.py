"""Kubernetes manifests for a plan, and schema checks standing in for a cluster.

    from servekit import k8s
    manifests = k8s.build_manifests(plan, profile, k8s.K8sOptions(namespace="llm"))
    k8s.validate(manifests.documents)
    print(k8s.render_k8s_text(plan, profile))
"""

from __future__ import annotations

from servekit.k8s.manifests import Manifests, build_manifests
from servekit.k8s.options import K8sOptions
from servekit.k8s.placeholders import SUBSTITUTIONS, resolve_command
from servekit.k8s.cli_glue import options_from_cli, plan_k8s_text
from servekit.k8s.text import dump_documents, render_k8s_text
from servekit.k8s.validate import KUBERNETES_VERSION, Problem, problems, validate

__all__ = [
    "KUBERNETES_VERSION", "K8sOptions", "Manifests", "Problem", "SUBSTITUTIONS", "build_manifests",
    "dump_documents", "options_from_cli", "plan_k8s_text", "problems", "render_k8s_text", "resolve_command", "validate",
]

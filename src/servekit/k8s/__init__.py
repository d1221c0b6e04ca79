"""Kubernetes manifests for a plan, servekit's own checks of them, and schema checks standing in
for a cluster.

    from servekit import k8s
    manifests = k8s.build_manifests(plan, profile, k8s.K8sOptions(namespace="llm"), downloads)
    k8s.validate(manifests.documents)   # Kubernetes schemas
    manifests.findings                  # servekit's semantic checks (devices, probes, shm, warm step)
    print(k8s.manifests_text(manifests, k8s.plan_header(plan)))

``servekit.app.k8s_plan`` lists the plan's files for the warm step (``downloads``) and renders
the text ``servekit plan --format k8s`` prints.
"""

from __future__ import annotations

from servekit.k8s.cache import RepoDownload
from servekit.k8s.cli_glue import options_from_cli
from servekit.k8s.manifests import Manifests, build_manifests
from servekit.k8s.options import K8sOptions
from servekit.k8s.placeholders import SUBSTITUTIONS, resolve_command
from servekit.k8s.semantic import check_manifests
from servekit.k8s.text import dump_documents, manifests_text, plan_header, render_k8s_text
from servekit.k8s.validate import KUBERNETES_VERSION, Problem, problems, validate

__all__ = [
    "KUBERNETES_VERSION", "K8sOptions", "Manifests", "Problem", "RepoDownload", "SUBSTITUTIONS", "build_manifests",
    "check_manifests", "dump_documents", "manifests_text", "options_from_cli", "plan_header", "problems",
    "render_k8s_text", "resolve_command", "validate",
]

"""Schema checks for generated documents, since no cluster is at hand to apply them to.

Built-in kinds are validated against the OpenAPI schemas of one pinned Kubernetes version bundled
in the ``kubernetes-validate`` package, in strict mode (unknown fields are errors).
LeaderWorkerSets are checked against ``lws_schema`` and their leader/worker pod templates against
the Kubernetes PodTemplateSpec schema of the same version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from servekit.errors import ServekitError
from servekit.k8s.lws_schema import LWS_FACTS, lws_schema
from servekit.records import record

KUBERNETES_VERSION = "1.34.0"
"""Schemas of this Kubernetes release (kubernetes-validate bundles 1.25 through 1.37)."""


@record
class Problem:
    kind: str
    name: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.kind}/{self.name}{where}: {self.message}"


def _kubernetes_validate():
    try:
        import kubernetes_validate
    except ImportError:
        raise ServekitError("validating Kubernetes documents needs the kubernetes-validate package",
                            fix="pip install 'servekit[k8s]' (or kubernetes-validate)") from None
    return kubernetes_validate


@lru_cache(maxsize=None)
def _definitions(version: str) -> Any:
    from referencing import Registry, Resource

    kv = _kubernetes_validate()
    defs = kv.utils.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    return Resource.from_contents(defs) @ Registry()


@lru_cache(maxsize=None)
def _validator(kind: str, api_version: str, version: str) -> Any:
    """The strict schema of one kind, read once (kubernetes-validate re-reads it on every call)."""
    import jsonschema
    from referencing import Resource

    kv = _kubernetes_validate()
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = kv.utils.schema_contents(
            f"kubernetes-json-schema/v{version}-local-strict/{kind.lower()}-{group}.json", version)
    except FileNotFoundError:
        return None
    registry = Resource.from_contents(schema) @ _definitions(version)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _builtin(doc: Mapping[str, Any], version: str) -> list[Problem]:
    kind, name = str(doc.get("kind")), str((doc.get("metadata") or {}).get("name", "?"))
    validator = _validator(kind, str(doc.get("apiVersion")), version)
    if validator is None:
        return [Problem(kind, name, "", f"no Kubernetes {version} schema for {doc.get('apiVersion')} {kind}")]
    return [Problem(kind, name, "/".join(str(p) for p in err.path), err.message)
            for err in validator.iter_errors(dict(doc))]


def _lws(doc: Mapping[str, Any], version: str) -> list[Problem]:
    import jsonschema

    name = str((doc.get("metadata") or {}).get("name", "?"))
    validator = jsonschema.Draft7Validator(lws_schema())
    problems = [Problem("LeaderWorkerSet", name, "/".join(str(p) for p in e.path), e.message)
                for e in validator.iter_errors(dict(doc))]
    template = ((doc.get("spec") or {}).get("leaderWorkerTemplate") or {})
    for key in ("leaderTemplate", "workerTemplate"):
        if key in template:
            wrapped = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"{name}-{key.lower()}"},
                       "template": template[key]}
            problems += [Problem("LeaderWorkerSet", name, f"spec/leaderWorkerTemplate/{key}/{p.path}", p.message)
                         for p in _builtin(wrapped, version)]
    return problems


def problems(docs: Iterable[Mapping[str, Any]], version: str = KUBERNETES_VERSION) -> list[Problem]:
    """Every schema problem in ``docs`` (empty when all of them validate)."""
    out: list[Problem] = []
    for doc in docs:
        if doc.get("apiVersion") == LWS_FACTS["api_version"] and doc.get("kind") == LWS_FACTS["kind"]:
            out += _lws(doc, version)
        else:
            out += _builtin(doc, version)
    return out


def validate(docs: Iterable[Mapping[str, Any]], version: str = KUBERNETES_VERSION) -> None:
    """Raise a ServekitError naming the first problems when any document does not validate."""
    found = problems(list(docs), version)
    if found:
        shown = "; ".join(str(p) for p in found[:3])
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise ServekitError(f"Kubernetes documents do not validate: {shown}{more}",
                            fix=f"these are checked against Kubernetes {version} schemas")

"""The public shape of one recipe: ``/{hf_id}.json`` and its promoted-variant twins.

The public document is the recipe as authored with four changes: ``hf_id`` comes first (taken
from the file's path), ``model.install`` is replaced by the synthesized install one-liners,
``dependencies`` moves into those (``model.install.extras``), and the synthesis-only inputs
(``strategy_overrides``, ``compatible_strategies``, ``default_strategy``) are dropped because
their effect is baked into ``recommended_command`` and the per-strategy files.

A variant whose ``model_id`` names another Hugging Face repository is *promoted*: it gets its
own ``/{model_id}.json`` that shares the parent's content but presents that variant as its
only (``default``) variant, and the parent's variant entry points at it with ``json``.
"""

from __future__ import annotations

from typing import Any

from servekit.api.install import synthesize_install

HEAD_KEYS = ("hf_id", "meta", "recommended_command")
OWN_KEY = "servekit"
"""servekit's additions to a document live under this key, which the reference never uses."""
SYNTHESIS_ONLY_KEYS = ("strategy_overrides", "compatible_strategies", "default_strategy")


def public_id(recipe_id: str) -> str:
    """``org/.../name`` -> ``org/name``: the Hugging Face id a recipe file stands for."""
    parts = recipe_id.split("/")
    return f"{parts[0]}/{parts[-1]}" if len(parts) >= 2 else recipe_id


def public_base(recipe: dict[str, Any], hf_id: str) -> dict[str, Any]:
    """The recipe with its identity and synthesized install, before renderings are attached."""
    doc = {k: v for k, v in recipe.items() if k != "dependencies" and k not in SYNTHESIS_ONLY_KEYS}
    doc["hf_id"] = hf_id
    install = synthesize_install(recipe)
    model = recipe.get("model")
    if model:
        rest = {k: v for k, v in model.items() if k != "install"}
        doc["model"] = {**rest, "install": install} if install else rest
    elif install:
        doc["model"] = {"install": install}
    return doc


def ordered(payload: dict[str, Any]) -> dict[str, Any]:
    """``hf_id``, ``meta``, ``recommended_command`` first, then the rest as they came."""
    out = {k: payload[k] for k in HEAD_KEYS if k in payload}
    out.update((k, v) for k, v in payload.items() if k not in HEAD_KEYS)
    return out


def promotion_target(variant: Any) -> str | None:
    """The Hugging Face id a variant is published under, when it names one (``org/name``)."""
    model_id = variant.get("model_id") if isinstance(variant, dict) else None
    return model_id if isinstance(model_id, str) and "/" in model_id else None


def link_promoted(doc: dict[str, Any], promoted: dict[str, str]) -> None:
    """Point each promoted variant of the parent document at its own JSON (``variant -> id``)."""
    if not promoted or "variants" not in doc:
        return
    variants = dict(doc["variants"] or {})
    for key, model_id in promoted.items():
        variants[key] = {**variants.get(key, {}), "json": f"/{model_id}.json"}
    doc["variants"] = variants


def promoted_doc(
    parent: dict[str, Any], variant_key: str, model_id: str, recommended: dict[str, Any]
) -> dict[str, Any]:
    """The stand-alone document of a promoted variant (parent content, that variant only)."""
    variant = (parent.get("variants") or {}).get(variant_key) or {}
    core = {k: v for k, v in variant.items() if k not in ("model_id", "json")}
    doc = dict(parent)
    doc["hf_id"] = model_id
    doc["meta"] = {**(parent.get("meta") or {}), "derived_from": parent["hf_id"], "variant": variant_key}
    doc["model"] = {**(parent.get("model") or {}), "model_id": model_id}
    doc["variants"] = {"default": core}
    doc["recommended_command"] = recommended
    return ordered(doc)


def set_own_facts(doc: dict[str, Any], facts: dict[str, Any] | None) -> None:
    """Put servekit's facts about a document's recommended command under its own key."""
    if facts is None:
        doc.pop(OWN_KEY, None)
    else:
        doc[OWN_KEY] = facts


def index_entry(doc: dict[str, Any], derived_from: str | None = None) -> dict[str, Any]:
    """One ``/models.json`` row; a promoted variant's page is its parent's page."""
    meta = doc.get("meta") or {}
    entry = {"hf_id": doc["hf_id"]}
    entry.update((key, meta[key]) for key in ("title", "provider") if key in meta)
    entry["url"] = f"/{derived_from or doc['hf_id']}"
    entry["json"] = f"/{doc['hf_id']}.json"
    if derived_from:
        entry["derived_from"] = derived_from
    return entry

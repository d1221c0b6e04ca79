"""The HTML pages: the landing page and command builder at ``/`` and the catalog at ``/catalog``.

All are rendered on the server from their URL query (Jinja2 with autoescaping: recipe text
is shown as text, never as markup) and work without JavaScript; ``/static/builder.js`` only
updates the builder in place and adds the copy buttons. The builder's answer is what
``servekit plan`` returns for the same request (``servekit.app.overridden.plan_with_overrides``,
the CLI's own call), and the landing page's "what runs on my hardware" is ``servekit fit --all``
(``servekit.app.fit_all``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from servekit.app.discovery import list_recipes
from servekit.app.overridden import plan_with_overrides
from servekit.app.plan import PlanResult
from servekit.app.run_site import RunSite
from servekit.catalog.faults import catalog_faults
from servekit.errors import ServekitError
from servekit.web.builder import Builder, build_form, hardware_name
from servekit.web.choices import parse_query, query_string
from servekit.web.landing import landing_context
from servekit.web.plan_sections import PlanSections, k8s_text, plan_sections
from servekit.web.site import Site

TEMPLATES = Path(__file__).with_name("templates")
PAGES_CACHED = 256


def environment() -> Environment:
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                       trim_blocks=True, lstrip_blocks=True)


def _facts(site: Site, result: PlanResult) -> tuple[tuple[str, str], ...]:
    sel = result.selection
    return (("Hardware", hardware_name(site.docs, sel.hardware)), ("Variant", sel.variant),
            ("Strategy", sel.strategy), ("Nodes", str(sel.node_count)), ("Engine", sel.engine),
            ("Deployment", result.plan.deploy_type))


def _docker(form: Builder, site: Site) -> PlanResult | str:
    """The request planned as ``servekit plan --docker`` checks it (in its container), or why not."""
    request = replace(form.request(site.docs), site=RunSite(container=True, docker=True))
    try:
        return plan_with_overrides(request, form.overrides)
    except ServekitError as exc:
        return str(exc)


def _plan(site: Site, form: Builder) -> tuple[PlanSections | None, str]:
    if form.selection is None or form.recipe_id is None:
        return None, ""
    docs = site.docs
    try:
        with catalog_faults(docs.root, docs.sources.get(f"models/{form.recipe_id}")):
            result = plan_with_overrides(form.request(docs), form.overrides)
            profile = site.hardware.get(result.selection.hardware)
            return plan_sections(result, _docker(form, site), k8s_text(result, profile), _facts(site, result),
                                 form.overrides.vllm_version), ""
    except ServekitError as exc:
        return None, str(exc)


def _description(site: Site, recipe_id: str | None) -> str:
    if recipe_id is None:
        return ""
    meta = site.docs.recipes[recipe_id].get("meta")
    return str(meta.get("description") or "") if isinstance(meta, dict) else ""


def builder_context(site: Site, items: tuple[tuple[str, str], ...]) -> tuple[dict[str, Any], int]:
    """The builder template's values for a query (the catalog does not change while served)."""
    choices = parse_query(items)
    if not choices.model:
        return landing_context(site, items), 200
    form = build_form(site.docs, choices)
    plan, error = _plan(site, form)
    status = 404 if form.error and form.recipe_id is None else 200
    canonical = "/?" + query_string(form.choices) if form.choices.model else "/"
    return {"form": form, "plan": plan, "error": error, "models": site.models, "canonical": canonical,
            "raw_model": choices.model, "description": _description(site, form.recipe_id)}, status


def _filters(request: Request) -> dict[str, str]:
    params = request.query_params
    return {key: (params.get(key) or "").strip()[:200] for key in ("q", "hardware", "feature", "vendor")}


def catalog_context(site: Site, request: Request) -> dict[str, Any]:
    filters = _filters(request)
    error = ""
    try:
        ids = {info.id for info in list_recipes(site.docs, hardware=filters["hardware"] or None,
                                                feature=filters["feature"] or None)}
    except ServekitError as exc:
        ids, error = set(), str(exc)
    needle = filters["q"].lower()
    rows = [row for row in site.models if row.id in ids
            and (not filters["vendor"] or row.vendor == filters["vendor"])
            and (not needle or needle in row.id.lower() or needle in row.title.lower())]
    hardware = [{"id": hw, "label": f"{(p or {}).get('display_name') or hw} ({hw})"} for hw, p in site.hardware.items()]
    features = sorted({f for row in site.models for f in row.features})
    return {"rows": [{**row.__dict__, "description": _description(site, row.id)} for row in rows],
            "total": len(site.models), "filters": filters, "hardware": hardware, "features": features,
            "vendors": sorted({row.vendor for row in site.models}), "error": error,
            "canonical": str(request.url.path) + (f"?{request.url.query}" if request.url.query else "")}


def router(site: Site) -> APIRouter:
    pages = APIRouter(include_in_schema=False)
    env = environment()

    @lru_cache(maxsize=PAGES_CACHED)
    def render_builder(items: tuple[tuple[str, str], ...]) -> tuple[str, int]:
        context, status = builder_context(site, items)
        return env.get_template("builder.html" if "form" in context else "landing.html").render(context), status

    @pages.get("/", response_class=HTMLResponse)
    def builder_page(request: Request) -> HTMLResponse:
        text, status = render_builder(tuple(request.query_params.multi_items()))
        return HTMLResponse(text, status_code=status)

    @pages.get("/catalog", response_class=HTMLResponse)
    def catalog_page(request: Request) -> HTMLResponse:
        return HTMLResponse(env.get_template("catalog.html").render(catalog_context(site, request)))

    @pages.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status_code=204)

    return pages

"""The live JSON API: the static tree's files, and plan / lint / fit on request.

``GET /api/{path}`` answers with the bytes ``servekit api build`` writes at ``path``;
``POST /api/plan`` takes one selection as a ``plan --batch`` line does and answers with the
plan and its checks; ``POST /api/lint`` checks an engine command; ``POST /api/fit`` checks
whether a model fits a hardware profile. Bad input is a JSON error with a 4xx status.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from servekit.app.checks import has_facts
from servekit.app.fit import FitOptions, run_fit
from servekit.app.layout import complete_reselector, fit_checker, name_fitting_layout
from servekit.app.plan import plan_from_selection
from servekit.app.plan_view import plan_payload
from servekit.catalog.faults import catalog_faults
from servekit.catalog.ids import canonical_id, recipe_for_model, unknown_model
from servekit.engines.lint import lint_argv, lint_shell
from servekit.engines.registry import engine_for_argv
from servekit.synthesis.resolve import selection_from_request
from servekit.web.site import Site

Name = Annotated[StrictStr, Field(min_length=1, max_length=200)]
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)+")


class ApiError(Exception):
    """A request the API answers with ``status`` and a message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PlanBody(BaseModel):
    """One selection, as a line of ``servekit plan --batch``: every choice named."""

    model_config = ConfigDict(extra="forbid")
    recipe: Name
    hardware: Name
    strategy: Name
    variant: Name | None = None
    node_count: StrictInt = 1
    features: list[Name] | None = Field(default=None, max_length=64)
    """The complete enabled set (``[]``: none); left out, the recipe's default features."""
    modes: dict[Name, Name] = Field(default_factory=dict, max_length=64)
    pd_nodes: dict[Name, StrictInt] | None = None
    kv_offload: Name | None = None
    engine: Name | None = None


class LintBody(BaseModel):
    """An engine command: a shell line (``command``) or its words (``argv``)."""

    model_config = ConfigDict(extra="forbid")
    command: Annotated[StrictStr, Field(max_length=32768)] | None = None
    argv: list[Annotated[StrictStr, Field(max_length=4096)]] | None = Field(default=None, max_length=2048)
    engine: Name | None = None
    version: Name | None = None


class FitBody(BaseModel):
    """A model (recipe id or checkpoint id) on a hardware profile, with optional launch settings."""

    model_config = ConfigDict(extra="forbid")
    model: Name
    hardware: Name
    variant: Name | None = None
    strategy: Name | None = None
    tp: Annotated[StrictInt, Field(ge=1, le=1024)] | None = None
    pp: Annotated[StrictInt, Field(ge=1, le=1024)] | None = None
    max_model_len: Annotated[StrictInt, Field(ge=1, le=1 << 30)] | None = None
    kv_cache_dtype: Name | None = None
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    max_num_seqs: Annotated[StrictInt, Field(ge=1, le=1 << 20)] | None = None
    engine: Name = "vllm"
    nodes: Annotated[StrictInt, Field(ge=1, le=64)] = 1


def _plan(site: Site, body: PlanBody) -> dict[str, Any]:
    docs = site.docs
    recipe_id = canonical_id(body.recipe, docs.recipes)
    if recipe_id is None:
        unknown = unknown_model(body.recipe, docs.recipes, fix="the recipes are listed at /api/models.json")
        raise ApiError(404, str(unknown))
    request = {**body.model_dump(exclude_none=True), "recipe": recipe_id}
    with catalog_faults(docs.root, docs.sources.get(f"models/{recipe_id}")):
        selection = selection_from_request(docs, request)
        result = plan_from_selection(docs, selection, checks=True)
        if result.checks:  # the body names its layout: when it does not fit, say which would
            name_fitting_layout(docs, selection, result.checks, complete_reselector(docs, selection), fit_checker(docs))
        return plan_payload(result)


def _lint(body: LintBody) -> dict[str, Any]:
    if body.argv:
        engine = body.engine or engine_for_argv(body.argv).id
        return lint_argv(engine, body.version, body.argv).to_dict()
    if body.command and body.command.strip():
        engine = body.engine or engine_for_argv(body.command.split()).id
        return lint_shell(engine, body.version, body.command).to_dict()
    raise ApiError(422, 'nothing to check: give "command" (a shell line) or "argv" (its words)')


def _fit(site: Site, body: FitBody) -> dict[str, Any]:
    model = body.model
    known = recipe_for_model(site.docs.recipes, model) is not None or has_facts(model)
    if not MODEL_ID.fullmatch(model) or ".." in model or not known:
        raise ApiError(404, f"no recipe or shipped model facts for {model!r}; give a recipe id or checkpoint id")
    given = body.model_dump(exclude={"model", "max_model_len"}, exclude_none=True)
    length = None if body.max_model_len is None else str(body.max_model_len)
    options = FitOptions(model=model, catalog=site.catalog, max_model_len=length, **given)
    check, context = run_fit(options)
    return {**context, **check.to_dict()}


def json_bytes(status: int, data: bytes) -> Response:
    return Response(data, status_code=status, media_type="application/json")


def router(site: Site) -> APIRouter:
    api = APIRouter(prefix="/api", tags=["api"])

    @api.post("/plan", summary="Plan one selection (a plan --batch line) with its checks")
    def post_plan(body: PlanBody) -> JSONResponse:
        return JSONResponse(_plan(site, body))

    @api.post("/lint", summary="Check an engine command against the pinned engine's flags")
    def post_lint(body: LintBody) -> JSONResponse:
        return JSONResponse(_lint(body))

    @api.post("/fit", summary="Check whether a model fits a hardware profile")
    def post_fit(body: FitBody) -> JSONResponse:
        return JSONResponse(_fit(site, body))

    @api.get("/{path:path}", summary="A file of the static API tree, rendered live",
             responses={200: {"content": {"application/json": {}}}, 404: {"description": "no such file"}})
    def get_file(path: Annotated[str, Path(max_length=1024)]) -> Response:
        data = site.tree.get(path)
        if data is None:
            raise ApiError(404, f"no API file at /api/{path}")
        return json_bytes(200, data)

    return api

"""The web application: builder and catalog pages, the live JSON API, the static files.

``create_app(catalog)`` reads the catalog once and returns the ASGI application; errors of
the API are JSON objects ``{"error": message, "status": code}`` with a 4xx status, and a bug
is a JSON 500 that shows no traceback.
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from servekit import __version__
from servekit.errors import ServekitError
from servekit.web import api_routes, pages
from servekit.web.api_routes import ApiError
from servekit.web.head import HeadAsGet
from servekit.web.security import SecurityMiddleware
from servekit.web.site import Site, load_site

STATIC = Path(__file__).with_name("static")
log = logging.getLogger("servekit.web")


def _error(status: int, message: str, **extra: object) -> JSONResponse:
    return JSONResponse({"error": message, "status": status, **extra}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {err.get('msg')}")
    return "; ".join(parts) or "invalid request"


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(ServekitError)
    async def servekit_error(request: Request, exc: ServekitError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        malformed = any(err.get("type") in ("json_invalid", "model_attributes_type") for err in exc.errors())
        return _error(400 if malformed else 422, _validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s", request.url.path)
        return _error(500, f"internal error ({type(exc).__name__}); the server log has the details")


def create_app(catalog: str | None = None, site: Site | None = None) -> FastAPI:
    """The application serving ``catalog`` (``None``: ``$SERVEKIT_CATALOG`` or the bundled one)."""
    served = site or load_site(catalog)
    app = FastAPI(title="servekit", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json",
                  description="Exact, checked launch plans for LLM servers: the recipe API, plan, lint and fit.")
    add_error_handlers(app)
    app.include_router(api_routes.router(served))
    app.include_router(pages.router(served))
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.add_middleware(SecurityMiddleware)
    app.add_middleware(HeadAsGet)
    app.state.site = served
    return app

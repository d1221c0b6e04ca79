"""``servekit web``: serve the command builder, the catalog pages and the live JSON API."""

from __future__ import annotations

import typer

from servekit.errors import ServekitError


def web_command(host: str, port: int, catalog: str | None) -> int:
    try:
        import uvicorn

        from servekit.web.server import create_app
    except ImportError as exc:
        raise ServekitError(f"the web server needs {exc.name}, which is not installed",
                            fix="pip install 'servekit[web]'") from None
    if not 0 < port < 65536:
        raise ServekitError(f"--port must be from 1 to 65535, not {port}")
    app = create_app(catalog)
    typer.echo(f"servekit web: http://{host}:{port}/ (Ctrl-C stops it)")
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
    return 0


def register(app: typer.Typer) -> None:
    @app.command("web")
    def _web(
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
        port: int = typer.Option(8080, "--port", help="Port to listen on."),
        catalog: str | None = typer.Option(None, "--catalog", help="Catalog directory (default: bundled)."),
    ) -> None:
        """Serve the web command builder, the catalog pages and the live JSON API."""
        raise typer.Exit(web_command(host, port, catalog))

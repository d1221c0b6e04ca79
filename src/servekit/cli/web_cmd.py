"""``servekit web``: serve the command builder, the catalog pages and the live JSON API.

The port is bound before anything is printed: a port in use is one clear error (exit 1), never
the banner followed by the server's own traceback. The server then serves on that very socket.
The web modules are imported only here, so no other command pays for them.
"""

from __future__ import annotations

import errno

import typer

from servekit.errors import ServekitError


def _bind(host: str, port: int):
    from servekit.processes import free_port, listener

    if not 0 < port < 65536:
        raise ServekitError(f"--port must be from 1 to 65535, not {port}")
    try:
        return listener(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ServekitError(f"port {port} on {host} is in use",
                                fix=f"use --port to pick another (port {free_port(host)} is free now)") from None
        raise ServekitError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                            fix="use --host with an address of this machine (127.0.0.1 for this machine only)") from None


def web_command(host: str, port: int, catalog: str | None) -> int:
    try:
        import uvicorn

        from servekit.web.server import create_app
    except ImportError as exc:
        raise ServekitError(f"the web server needs {exc.name}, which is not installed",
                            fix="reinstall servekit (pip install -e . installs the web server's dependencies)") from None
    sock = _bind(host, port)
    try:
        app = create_app(catalog)
        typer.echo(f"servekit web: http://{host}:{port}/ (Ctrl-C stops it)")
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
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

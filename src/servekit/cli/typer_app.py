"""The typer application: the root (``--version``, shell completion) and every command.

Each subcommand lives in its own module under ``servekit.cli`` and exposes ``register(app)``;
adding a command is one module plus one entry in ``COMMAND_MODULES``. ``servekit.cli.app``
builds this application for every command line except a plain ``servekit plan``
(``servekit.cli.plan_argv``), so importing typer is paid only where it is used.
"""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES: dict[str, str] = {
    "plan": "servekit.cli.plan_cmd",
    "catalog": "servekit.cli.catalog_cmd",
    "api": "servekit.cli.api_cmd",
    "engine": "servekit.cli.engine_cmd",
    "lint": "servekit.cli.lint_cmd",
    "fit": "servekit.cli.fit_cmd",
    "perf": "servekit.cli.perf_cmd",
    "warm-cache": "servekit.cli.warm_cmd",
    "list": "servekit.cli.list_cmd",
    "show": "servekit.cli.show_cmd",
    "facts": "servekit.cli.facts_cmd",
    "web": "servekit.cli.web_cmd",
    "up": "servekit.cli.up_cmd",
    "ps": "servekit.cli.ps_cmd",
    "logs": "servekit.cli.logs_cmd",
    "down": "servekit.cli.down_cmd",
    "verify": "servekit.cli.verify_cmd",
    "bench": "servekit.cli.bench_cmd",
}
"""Command name -> the module that registers it. Only the invoked command's module is imported,
so a cold ``servekit plan`` does not pay for engines, pydantic or huggingface_hub."""

HELP = "Exact, checked launch plans for LLM servers, from recipe catalogs."


def _show_version(value: bool) -> None:
    if value:
        from servekit import __version__

        typer.echo(f"servekit {__version__}")
        raise typer.Exit(0)


def build_app(argv: list[str] | None = None) -> typer.Typer:
    app = typer.Typer(
        name="servekit",
        help=HELP,
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                     help="Print servekit's version and exit."),
    ) -> None:
        """Exact, checked launch plans for LLM servers, from recipe catalogs."""

    first = next((a for a in (argv or []) if not a.startswith("-")), None)
    wanted = [COMMAND_MODULES[first]] if first in COMMAND_MODULES else list(COMMAND_MODULES.values())
    for name in wanted:
        importlib.import_module(name).register(app)
    return app

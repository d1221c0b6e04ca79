"""The typer application and the one error boundary around it.

Each subcommand lives in its own module under ``servekit.cli`` and exposes
``register(app)``; adding a command is one module plus one line in ``COMMAND_MODULES``.
Expected errors exit 1 with one line, Ctrl-C exits 130, bugs exit 3 with the traceback
written to a log file (``SERVEKIT_DEBUG=1`` prints it instead).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import typer

COMMAND_MODULES: list[str] = [
    "servekit.cli.plan_cmd",
    "servekit.cli.catalog_cmd",
    "servekit.cli.api_cmd",
    "servekit.cli.engine_cmd",
    "servekit.cli.lint_cmd",
    "servekit.cli.fit_cmd",
    "servekit.cli.warm_cmd",
]


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="servekit",
        help="Exact, checked launch plans for LLM servers, from recipe catalogs.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a command module not written yet; others still work
                continue
            raise
        module.register(app)
    return app


def _log_bug(exc: BaseException) -> str:
    from servekit.paths import log_dir

    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "servekit-crash.log"
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
        fh.write("\n")
    return str(path)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) the process exit code."""
    from servekit.errors import ServekitError

    app = build_app()
    try:
        app(args=argv, prog_name="servekit", standalone_mode=False)
    except ServekitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return code
    except Exception as exc:  # noqa: BLE001 - the one place bugs are caught
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            print("aborted", file=sys.stderr)
            return 130
        if isinstance(exc, click.exceptions.Exit):
            return exc.exit_code
        if os.environ.get("SERVEKIT_DEBUG") == "1":
            traceback.print_exc()
        else:
            where = _log_bug(exc)
            print(f"internal error: {type(exc).__name__}: {exc} (details in {where})", file=sys.stderr)
        return 3
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

"""The typer application and the one error boundary around it.

Each subcommand lives in its own module under ``servekit.cli`` and exposes
``register(app)``; adding a command is one module plus one entry in ``COMMAND_MODULES``.
Expected errors exit 1 with one line, Ctrl-C exits 130, bugs exit 3 with the traceback
written to a log file (``SERVEKIT_DEBUG=1`` prints it instead).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import typer

COMMAND_MODULES: dict[str, str] = {
    "plan": "servekit.cli.plan_cmd",
    "catalog": "servekit.cli.catalog_cmd",
    "api": "servekit.cli.api_cmd",
    "engine": "servekit.cli.engine_cmd",
    "lint": "servekit.cli.lint_cmd",
    "fit": "servekit.cli.fit_cmd",
    "warm-cache": "servekit.cli.warm_cmd",
}
"""Command name -> the module that registers it. Only the invoked command's module is imported,
so a cold ``servekit plan`` does not pay for engines, pydantic or huggingface_hub."""


def build_app(argv: list[str] | None = None) -> typer.Typer:
    app = typer.Typer(
        name="servekit",
        help="Exact, checked launch plans for LLM servers, from recipe catalogs.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @app.callback()
    def _root() -> None:
        """Exact, checked launch plans for LLM servers, from recipe catalogs."""

    first = next((a for a in (argv or []) if not a.startswith("-")), None)
    wanted = [COMMAND_MODULES[first]] if first in COMMAND_MODULES else list(COMMAND_MODULES.values())
    for name in wanted:
        importlib.import_module(name).register(app)
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

    if argv is None:
        argv = sys.argv[1:]
    try:
        app = build_app(argv)
        # with standalone_mode=False click returns the code of a `typer.Exit(n)` instead of raising
        code = app(args=argv, prog_name="servekit", standalone_mode=False)
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
        # typer carries its own copy of click; its usage errors know how to show themselves
        kind = type(exc).__name__
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            return exc.exit_code
        if kind == "Abort":
            print("aborted", file=sys.stderr)
            return 130
        if kind == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        if os.environ.get("SERVEKIT_DEBUG") == "1":
            traceback.print_exc()
        else:
            where = _log_bug(exc)
            print(f"internal error: {type(exc).__name__}: {exc} (details in {where})", file=sys.stderr)
        return 3
    return code if isinstance(code, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

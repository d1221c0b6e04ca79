"""The typer application and the one error boundary around it.

Each subcommand lives in its own module under ``servekit.cli`` and exposes
``register(app)``; adding a command is one module plus one entry in ``COMMAND_MODULES``.
Expected errors exit 1 with one line on stderr (and, under ``--format json``, a JSON error
object on stdout), options that contradict each other exit 2 (``ConflictError``, like click's
usage errors), Ctrl-C exits 130, bugs exit 3 with the traceback written to a log file
(``SERVEKIT_DEBUG=1`` prints it instead).
"""

from __future__ import annotations

import importlib
import json
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


def _log_bug(exc: BaseException) -> str:
    from servekit.atomic import append_text
    from servekit.paths import log_dir

    path = log_dir() / "servekit-crash.log"
    append_text(path, "".join(traceback.format_exception(exc)) + "\n")
    return str(path)


def wants_json(argv: list[str]) -> bool:
    """``--format json`` (or ``--format=json``) is among the arguments, before any ``--``."""
    args = argv[:argv.index("--")] if "--" in argv else argv
    return "--format=json" in args or any(a == "--format" and b == "json" for a, b in zip(args, args[1:]))


def report_error(message: str, fix: str | None, argv: list[str], kind: str = "error") -> None:
    """The one error form: one line on stderr (with the fix), and a JSON object on stdout for
    ``--format json``."""
    print(f"error: {message}" + (f" (fix: {fix})" if fix else ""), file=sys.stderr)
    if wants_json(argv):
        sys.stdout.write(json.dumps({"error": message, "fix": fix, "kind": kind}, ensure_ascii=False) + "\n")


def _servekit_error(exc, argv: list[str]) -> int:
    from servekit.errors import CatalogError

    if isinstance(exc, CatalogError):
        location = str(exc.location)
        message = f"{location}: {exc.message}"
    else:
        message = exc.message
    report_error(message, exc.fix, argv, type(exc).__name__)
    return exc.exit_code


def _click_error(exc, argv: list[str]) -> int:
    """A usage error from click (typer's copy): click's own lines, and the JSON object when asked."""
    exc.show()
    if wants_json(argv):
        sys.stdout.write(json.dumps({"error": exc.format_message(), "fix": "see --help", "kind": "usage"}) + "\n")
    return exc.exit_code


def _bug(exc: BaseException) -> int:
    if os.environ.get("SERVEKIT_DEBUG") == "1":
        traceback.print_exc()
    else:
        where = _log_bug(exc)
        print(f"internal error: {type(exc).__name__}: {exc} (details in {where})", file=sys.stderr)
    return 3


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
        return _servekit_error(exc, argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the one place bugs are caught
        # typer carries its own copy of click; its usage errors know how to show themselves
        kind = type(exc).__name__
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            return _click_error(exc, argv)
        if kind == "Abort":
            print("aborted", file=sys.stderr)
            return 130
        if kind == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        return _bug(exc)
    return code if isinstance(code, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

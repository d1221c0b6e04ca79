"""The one error boundary around the command line, and the dispatch to its commands.

A plain ``servekit plan ...`` (``servekit.cli.plan_argv``) runs without typer; every other
command line goes to the typer application (``servekit.cli.typer_app``). Expected errors exit 1 with one line on stderr (and, under ``--format json``, a JSON error
object on stdout), options that contradict each other exit 2 (``ConflictError``, like click's
usage errors), Ctrl-C exits 130, bugs exit 3 with the traceback written to a log file
(``SERVEKIT_DEBUG=1`` prints it instead).
"""

from __future__ import annotations

import gc
import json
import os
import sys

from servekit.cli.plan_argv import plain_plan
from servekit.cli.plan_run import run_plan


def build_app(argv: list[str] | None = None):
    """The typer application (``servekit.cli.typer_app``; imported here, in the same package,
    rather than at the top, so that a plain ``servekit plan`` never imports typer)."""
    from servekit.cli.typer_app import build_app as build

    return build(argv)


def _log_bug(exc: BaseException) -> str:
    import traceback  # stdlib, imported where a bug is reported: not every command pays for it
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
        import traceback  # stdlib, imported where a bug is reported

        traceback.print_exc()
    else:
        where = _log_bug(exc)
        print(f"internal error: {type(exc).__name__}: {exc} (details in {where})", file=sys.stderr)
    return 3


def _run_plain(opts) -> int:
    """``run_plan``, answering what typer answers around a command: Ctrl-C is exit 130 without
    a message, and a reader that went away (``servekit plan ... | head -1``) is exit 1 without
    a traceback."""
    try:
        return run_plan(opts)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) the process exit code."""
    from servekit.errors import ServekitError

    if argv is None:
        argv = sys.argv[1:]
    try:
        plain = plain_plan(argv)
        if plain is not None:  # a plain `servekit plan ...`: the same options, read without typer
            return _run_plain(plain)
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
    """Console-script entry point. The process ends right after the command: its objects are
    frozen out of the garbage collector first (``gc.freeze``), so the interpreter's last
    collections at shutdown do not walk every object a plan made (about 35 ms of CPU on a cold
    ``servekit plan``, a fifth of it) only for the memory to be handed back to the system anyway.
    Objects are still released by reference counting, so files close and finalizers run. A plain
    plan of one model runs with the collector off from the start: its imports and its plan make a
    great many objects and leave a few hundred in cycles, and the thirty-odd collections they would
    set off (some 5 ms of CPU) free nothing the process's end does not (a batch, whose lines may
    be many, keeps the collector on)."""
    plain = plain_plan(sys.argv[1:])
    if plain is not None and plain.batch is None:
        gc.disable()
    code = main()
    gc.freeze()
    sys.exit(code)

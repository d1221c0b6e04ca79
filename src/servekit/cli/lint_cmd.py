"""``servekit lint``: check an engine command line against a pinned engine version."""

from __future__ import annotations

import json

import typer

from servekit.engines.common.findings import LintResult
from servekit.engines.lint import lint_batch
from servekit.engines.registry import engine_for_argv, engine_names
from servekit.engines.shell_lint import lint_shell_words
from servekit.errors import ServekitError


def guess_engine(argv: list[str]) -> str:
    """The engine whose program words start the command. Options alone are read as the native
    engine's; a program no engine knows is an error naming the engines."""
    from servekit.engines.common.command_line import strip_env

    engine = engine_for_argv(argv)
    _, rest = strip_env(argv)
    if not engine.recognizes(argv) and rest and not rest[0].startswith("-"):
        raise ServekitError(f"{rest[0]!r} is not the program of an engine servekit checks "
                            f"(it knows {', '.join(engine_names())})",
                            fix="lint a command such as `vllm serve MODEL ...`, or pass --engine NAME")
    return engine.id


def render_text(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        where = f" [{f.option}]" if f.option else ""
        fix = f"\n    fix: {f.fix}" if f.fix else ""
        lines.append(f"{f.severity}: {f.code}{where}: {f.message}{fix}")
    errors = len(result.errors)
    verdict = "valid" if result.valid else f"invalid ({errors} error{'s' if errors != 1 else ''})"
    lines.append(f"{result.engine} {result.version}: {verdict}")
    return "\n".join(lines)


def lint_command(argv: list[str], engine: str | None, version: str | None, output_format: str) -> int:
    if not argv:
        raise ServekitError("nothing to check",
                            fix="write the command after --, e.g. servekit lint -- vllm serve MODEL")
    result = lint_shell_words(argv, engine, version, guess_engine)
    if output_format == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(render_text(result))
    return 0 if result.valid else 1


def batch_command(path: str, version: str | None) -> int:
    from servekit.cli.inputs import open_input, write_json_lines

    with open_input(path, "batch file") as handle:
        results = lint_batch(list(handle), version)  # bytes lines: a line that is not UTF-8 is its own error
    write_json_lines(results, path, "batch file", sort_keys=True)
    return 0 if all(obj.get("valid") for obj in results) else 1


def register(app: typer.Typer) -> None:
    @app.command(
        "lint",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Check an engine command (after --) against the pinned engine's real flags. "
        "Exit 1 when it has errors.",
    )
    def _lint(
        argv: list[str] = typer.Argument(None, help="the command, e.g. vllm serve MODEL --max-model-len 8192"),
        engine: str = typer.Option(
            None, "--engine", help=f"{', '.join(engine_names())} (default: guessed from the command)"
        ),
        version: str = typer.Option(None, "--version", help="engine version of the flag catalog (default: pinned)"),
        output_format: str = typer.Option("text", "--format", help="text or json"),
        batch: str = typer.Option(None, "--batch", help='JSONL file of {"engine": E, "command": LINE}; - for stdin'),
    ) -> None:
        if output_format not in ("text", "json"):
            raise ServekitError(f"unknown format {output_format!r}", fix="use text or json")
        if batch is not None:
            raise SystemExit(batch_command(batch, version))
        raise SystemExit(lint_command(list(argv or []), engine, version, output_format))

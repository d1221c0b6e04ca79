"""``servekit lint``: check an engine command line against a pinned engine version."""

from __future__ import annotations

import json

import typer

from servekit.app.upgrade import UpgradeLint, lint_upgrade
from servekit.engines.common.findings import LintResult
from servekit.engines.lint import lint_batch
from servekit.engines.registry import engine_for_argv, engine_names
from servekit.engines.shell_lint import engine_command, lint_shell_words
from servekit.errors import ConflictError, ServekitError


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


def render_upgrade(result: UpgradeLint) -> str:
    data = result.to_dict()
    lines = []
    for f in data["findings"]:
        where = f" [{f['option']}]" if f.get("option") else ""
        release = f" ({f['release']})" if f.get("release") else ""
        fix = f"\n    fix: {f['fix']}" if f.get("fix") else ""
        source = f"\n    source: {f['source']}" if f.get("source") else ""
        lines.append(f"{f['severity']}: {f['code']}{where}{release}: {f['message']}{fix}{source}")
    if data["rewritten"] is not None:
        lines.append(f"rewritten for {data['engine']} {data['to']}: {data['rewritten']}")
    errors = sum(1 for f in data["findings"] if f["severity"] == "error")
    verdict = "starts as written" if data["ok"] else f"refused as written ({errors} error{'s' if errors != 1 else ''})"
    lines.append(f"{data['engine']} {data['from']} -> {data['to']}: {verdict}")
    return "\n".join(lines)


def upgrade_command(argv: list[str], engine: str | None, releases: tuple[str, str], hardware: str | None,
                    output_format: str) -> int:
    if not argv:
        raise ServekitError("nothing to check",
                            fix="write the command after --, e.g. servekit lint --from 0.9.2 --to 0.33.0 -- vllm serve M")
    result = lint_upgrade(engine_command(argv), engine, releases[0], releases[1], hardware, guess_engine)
    if output_format == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(render_upgrade(result))
    return 0 if result.ok else 1


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
        old: str = typer.Option(None, "--from", help="the release the command runs on now (an upgrade check)"),
        new: str = typer.Option(None, "--to", help="the release to move to (with --from)"),
        hardware: str = typer.Option(None, "--hardware", help="with --from: compare the KV pool and fit on this "
                                     "hardware when the model's facts are known"),
    ) -> None:
        if output_format not in ("text", "json"):
            raise ServekitError(f"unknown format {output_format!r}", fix="use text or json")
        if old is not None or new is not None:
            target = new or version
            if old is None or target is None or (new and version and new != version) or batch is not None:
                raise ConflictError("an upgrade check takes --from A and --to B (and no --batch)",
                                    fix="servekit lint --from 0.9.2 --to 0.33.0 -- vllm serve MODEL ...")
            raise SystemExit(upgrade_command(list(argv or []), engine, (old, target), hardware, output_format))
        if hardware is not None:
            raise ConflictError("--hardware belongs to an upgrade check", fix="add --from A --to B, or drop --hardware")
        if batch is not None:
            raise SystemExit(batch_command(batch, version))
        raise SystemExit(lint_command(list(argv or []), engine, version, output_format))

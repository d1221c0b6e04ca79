"""``servekit engine install|list|remove|path``: local, pinned engine environments (``list`` also
shows every stored flag catalog: engine, release, command and how it was extracted);
``servekit engine diff``: what changed in an engine's options between two stored versions."""

from __future__ import annotations

import json
from dataclasses import replace

import typer

from servekit.engines import environments
from servekit.engines.install_specs import parse_requirement, recipes


def install_command(requirement: str, force: bool = False, torch_index: str | None = None) -> int:
    spec = parse_requirement(requirement)
    if torch_index:
        spec = replace(spec, torch_index=torch_index, torch_index_required=True)
    env = environments.env_for(spec)
    if force or environments.find_env(spec) is None:
        typer.echo(f"installing {env.spec.requirement} into {env.root} (log: {env.log}); this can take minutes",
                   err=True)
    outcome = environments.install(spec, force=force, notify=lambda note: typer.echo(note, err=True))
    verb = "already installed" if outcome.reused else "installed"
    typer.echo(f"{outcome.env.spec.requirement} {verb}: {outcome.env.python}")
    return 0


def catalog_rows() -> list[dict[str, str]]:
    """One row per stored flag catalog of every registered engine (an engine sharing another's
    catalogs, as the vLLM platform plugins do, adds none)."""
    from servekit.engines.registry import engines

    rows: list[dict[str, str]] = []
    seen = set()
    for engine in engines():
        store = engine.catalogs
        if store is None or store in seen:
            continue
        seen.add(store)
        for command in engine.commands:
            for version in store.versions(command):
                source = store.load(version, command).source
                rows.append({
                    "engine": store.engine, "version": version, "command": command,
                    # catalogs without a method were all read from the engine's own parser
                    "method": source.get("method", "parser"), "environment": source.get("environment", "full"),
                    "file": store.path(version, command).name,
                })
    return rows


def _catalog_line(row: dict[str, str]) -> str:
    how = row["method"] if row["method"] != "parser" else f"parser ({row['environment']} environment)"
    return f"{row['engine']:8} {row['version']:12} {row['command']:22} {how}"


def list_command(output_format: str = "text") -> int:
    envs = environments.list_envs()
    catalogs = catalog_rows()
    if output_format == "json":
        rows = [
            {
                "key": e.key,
                "state": e.state,
                "path": str(e.root),
                "requirement": (e.record or {}).get("requirement"),
                "python": (e.record or {}).get("interpreter", {}).get("executable"),
                "key_packages": (e.record or {}).get("key_packages", {}),
            }
            for e in envs
        ]
        typer.echo(json.dumps({"version": 1, "environments": rows, "catalogs": catalogs}, indent=2))
        return 0
    if not envs:
        typer.echo("no engine environments")
    for e in envs:
        python = (e.record or {}).get("interpreter", {}).get("executable", "")
        typer.echo(f"{e.key:24} {e.state:11} {python}")
    typer.echo(f"stored flag catalogs ({len(catalogs)}):")
    for row in catalogs:
        typer.echo("  " + _catalog_line(row))
    return 0


def remove_command(requirement: str) -> int:
    removed = environments.remove(requirement)
    typer.echo(f"removed {requirement}" if removed else f"{requirement} was not installed")
    return 0


def path_command(requirement: str) -> int:
    env = environments.find_env(requirement)
    if env is None:
        typer.echo(f"{requirement} is not installed (run: servekit engine install {requirement})", err=True)
        return 1
    typer.echo(str(env.python))
    return 0


def diff_command(engine: str, old: str, new: str, command: str | None, output_format: str) -> int:
    from servekit.engines.common.catalog_diff import diff_catalogs, render_diff
    from servekit.engines.registry import get_engine
    from servekit.errors import ServekitError

    if output_format not in ("text", "json"):
        raise ServekitError(f"unknown format {output_format!r}", fix="use text or json")
    chosen = get_engine(engine)
    sub = command or chosen.commands[0]
    diff = diff_catalogs(chosen.flag_catalog(old, sub), chosen.flag_catalog(new, sub))
    if output_format == "json":
        typer.echo(json.dumps(diff.to_dict(), indent=2))
    else:
        typer.echo("\n".join(render_diff(diff)))
    return 0


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Install, list and remove local engine environments.", no_args_is_help=True)

    @group.command("install")
    def _install(
        requirement: str = typer.Argument(
            ..., help="NAME==VERSION, e.g. " + " or ".join(r.requirement for r in recipes().values())
        ),
        force: bool = typer.Option(False, "--force", help="Rebuild even when a healthy env exists."),
        torch_index: str = typer.Option(
            None, "--torch-index", metavar="URL|local",
            help="Package index of the CPU torch build (default: the PyTorch CPU index, or pip's own sources "
                 "when it cannot be reached); 'local': pip's configured sources (a wheel via find-links)."),
    ) -> None:
        """Create (or reuse) the pinned, isolated environment of one engine release."""
        raise SystemExit(install_command(requirement, force, torch_index))

    @group.command("list")
    def _list(output_format: str = typer.Option("text", "--format", help="text or json")) -> None:
        """List the engine environments servekit manages, with their state, and every stored flag catalog."""
        raise SystemExit(list_command(output_format))

    @group.command("remove")
    def _remove(requirement: str = typer.Argument(..., help="NAME==VERSION of an installed environment.")) -> None:
        """Delete one engine environment."""
        raise SystemExit(remove_command(requirement))

    @group.command("path")
    def _path(requirement: str = typer.Argument(..., help="NAME==VERSION of an installed environment.")) -> None:
        """Print the interpreter of an installed engine environment."""
        raise SystemExit(path_command(requirement))

    @group.command("diff")
    def _diff(
        engine: str = typer.Argument(..., help="engine id, e.g. vllm"),
        old: str = typer.Argument(..., help="older version with a stored catalog, e.g. 0.32.0"),
        new: str = typer.Argument(..., help="newer version with a stored catalog, e.g. 0.33.0"),
        command: str = typer.Option(None, "--command", help="engine sub-command (default: its first, e.g. serve)"),
        output_format: str = typer.Option("text", "--format", help="text or json"),
    ) -> None:
        """Options added, removed and renamed, and changed choices and defaults, between two versions."""
        raise SystemExit(diff_command(engine, old, new, command, output_format))

    app.add_typer(group, name="engine")

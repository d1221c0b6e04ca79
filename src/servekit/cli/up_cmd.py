"""``servekit up MODEL``: plan, check, start and wait until the server answers; print its endpoint.

MODEL is a recipe id, a checkpoint id, or a local model directory (a minimal ``vllm serve DIR``
plan). Hardware ``local`` (this machine) is the default; a named hardware profile of the same
kind as this machine (a CPU profile on a machine without GPUs) also runs here. A plan with
several processes (prefill and decode servers with a router, companions) starts them all here.
A plan that fails its checks does not start unless ``--force``; ``--dry-run`` prints the exact
commands (``--docker``: the ``docker run`` form) and starts nothing; ``--docker`` runs the
container form through the docker CLI. The container form of a local model directory is the one
``servekit plan DIR --docker`` prints; ``--image``, ``--volume``, ``--pull`` and ``--host`` set it
(``servekit.launch.docker_run.ContainerOptions``).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

import typer

from servekit.cli.up_plan import LOCAL, UpCommand, build_plan, runs_here
from servekit.errors import ServekitError


def _print_dry_run(plan: Any, pre: Any, opts: UpCommand, hardware: str, profile: Any) -> None:
    if opts.output_format == "json":
        typer.echo(json.dumps({"plan": plan.to_dict(), "checks": pre.to_dict()}, indent=2))
        return
    where = f"; {LOCAL} is {(profile or {}).get('display_name')}" if hardware == LOCAL else ""
    typer.echo(f"# {plan.source}: engine {plan.engine}, served as {plan.served_name}{where}")
    if opts.docker:
        if not plan.docker_commands:
            raise ServekitError("this plan has no container form (no image for its hardware)",
                                fix="pin an image in the recipe, or run it locally without --docker")
        for command in plan.docker_commands:
            typer.echo(command)
    else:
        from servekit.synthesis.shell import quote_word

        for process in plan.processes:
            env = " ".join(quote_word(f"{k}={v}") for k, v in process.env.items())
            if len(plan.processes) > 1:
                typer.echo(f"# {process.role} ({process.kind})")
            typer.echo((env + " " if env else "") + " ".join(quote_word(w) for w in process.argv))
    for reason in pre.reasons:
        typer.echo(f"refused: {reason}")


@contextmanager
def phase_display(enabled: bool) -> Iterator[Any]:
    """A live rich display of the startup phases on stderr; None when disabled."""
    if not enabled:
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting the server ...") as status:
        def on_phase(name: str, seconds: float) -> None:
            console.print(f"  [green]✓[/green] {name}  ({seconds:.1f} s)")
            status.update(f"after {name} ...")
        yield on_phase


def _refuse(pre: Any) -> int:
    print("error: the plan fails its pre-launch checks; nothing was started (--force starts it anyway)",
          file=sys.stderr)
    for reason in pre.reasons:
        print(f"  {reason}", file=sys.stderr)
    return 1


def _foreground(record: Any) -> int:
    from servekit.processes import exited
    from servekit.launch.up import stop_recorded

    typer.echo(f"serving {record.served_name} at {record.url} (run {record.run}); Ctrl-C stops it")
    try:
        while not any(exited(pid) is not None for pid in record.pids):
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    stop_recorded(record)
    return 0


def _start(plan: Any, opts: UpCommand, described: dict[str, Any]) -> Any:
    from servekit.launch.up import UpOptions, start_run

    options = UpOptions(host=opts.host, port=opts.port, ready_timeout=opts.ready_timeout)
    with phase_display(opts.output_format == "text") as on_phase:
        if not opts.docker:
            return start_run(plan, described, options, on_phase)
        from servekit.engines.registry import get_engine
        from servekit.launch.docker_run import ContainerOptions, missing_volume_sources, start_docker
        from servekit.launch.up import new_record

        if missing := missing_volume_sources(ContainerOptions(tuple(opts.volumes))):
            raise ServekitError(f"--volume source {missing[0]} does not exist on this machine",
                                fix="create it or correct the path (Docker would mount an empty folder)")
        record = new_record(plan, described, get_engine(plan.engine).default_version)
        return start_docker(plan, record, opts.ready_timeout, on_phase)


def _not_ready(record: Any) -> int:
    from servekit.launch.up import log_tail

    which = f" ({record.failed} failed)" if record.failed else ""
    print(f"error: run {record.run} did not become ready{which}: {record.detail}", file=sys.stderr)
    print(log_tail(record, role=record.failed), file=sys.stderr)
    return 1


def _report(record: Any, opts: UpCommand) -> None:
    if opts.output_format == "json":
        processes = [{"role": p.role, "kind": p.kind, "pid": p.pid, "url": p.url, "log": p.log,
                      **({"container": p.container} if p.container else {})} for p in record.processes]
        typer.echo(json.dumps({"run": record.run, "url": record.url, "pids": record.pids, "processes": processes}))
    elif opts.detach:
        typer.echo(f"{record.url}  (run {record.run}; servekit down {record.run} stops it)")


def up_command(opts: UpCommand) -> int:
    from servekit.launch.machine import detect
    from servekit.launch.prelaunch import prelaunch

    if opts.output_format not in ("text", "json"):
        raise ServekitError(f"--format {opts.output_format!r} is not text or json")
    machine = detect()
    planned = build_plan(opts, machine)
    plan, hardware, profile = planned.plan, planned.hardware, planned.profile
    pre = prelaunch(plan, planned.fit, docker=opts.docker)
    if opts.dry_run:
        _print_dry_run(plan, pre, opts, hardware, profile)
        return 0 if pre.ok or opts.force else 1
    if not pre.ok and not opts.force:
        return _refuse(pre)
    if not opts.docker and hardware != LOCAL and not runs_here(profile, machine):
        raise ServekitError(f"hardware {hardware!r} is not this machine ({machine.kind}, {machine.cpu_model})",
                            fix="print the exact commands with --docker --dry-run and run them where they belong")
    described = {"name": hardware, "profile": profile, "machine": machine.to_dict()}
    record = _start(plan, opts, described)
    if record.state != "ready":
        return _not_ready(record)
    _report(record, opts)
    return 0 if opts.detach else _foreground(record)


def register(app: typer.Typer) -> None:
    from servekit.app.engine_choice import engine_help

    @app.command("up")
    def _up(
        model: str = typer.Argument(..., help="Recipe id, checkpoint id, or a local model directory."),
        hardware: str = typer.Option(LOCAL, "--hardware", help="local (this machine) or a taxonomy profile."),
        variant: str = typer.Option(None, "--variant", help="Variant key of the recipe (see `servekit show MODEL`)."),
        strategy: str = typer.Option(None, "--strategy", help="Serving strategy id (see `servekit list strategies`)."),
        feature: list[str] = typer.Option([], "--feature", help="Enable a feature (repeatable)."),
        no_feature: list[str] = typer.Option([], "--no-feature", help="Disable a feature (repeatable)."),
        mode: list[str] = typer.Option([], "--mode", help="FEATURE=MODE (repeatable)."),
        engine: str = typer.Option(None, "--engine", help=engine_help()),
        catalog: str = typer.Option(None, "--catalog", help="Catalog directory (default: bundled)."),
        max_model_len: int = typer.Option(None, "--max-model-len", help="The server's --max-model-len (over the recipe's)."),
        served_name: str = typer.Option(None, "--served-model-name", help="Local model: the served name."),
        arg: list[str] = typer.Option([], "--arg", help="Local model: one more engine argument (--arg=--flag)."),
        env: list[str] = typer.Option([], "--env", help="NAME=VALUE for the server (repeatable)."),
        kv_cache_space: float = typer.Option(None, "--kv-cache-space", help="CPU KV pool, GiB."),
        docker: bool = typer.Option(False, "--docker", help="The container form: run it through the docker CLI."),
        host: str = typer.Option("127.0.0.1", "--host", help="Address the server listens on (--docker: its port is published on)."),
        port: int = typer.Option(None, "--port", help="Port to serve on (default: a free one)."),
        detach: bool = typer.Option(False, "--detach", help="Return once ready; leave the server running."),
        force: bool = typer.Option(False, "--force", help="Start even when the pre-launch checks fail."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the exact commands; start nothing."),
        output_format: str = typer.Option("text", "--format", help="text or json"),
        ready_timeout: float = typer.Option(1800.0, "--ready-timeout", help="Seconds to wait for readiness."),
        kv_offload: str = typer.Option(None, "--kv-offload", help="KV offload or KV-store option (see `servekit show MODEL`)."),
        image: str = typer.Option(None, "--image", help="--docker: run this image (same family) instead of the plan's."),
        volume: list[str] = typer.Option([], "--volume", help="--docker: one more bind mount SRC:DST[:ro] (repeatable)."),
        pull: str = typer.Option(None, "--pull", help="--docker: Docker's pull policy: missing, always or never."),
    ) -> None:
        """Start a model's server here and wait until it answers; print its endpoint."""
        code = up_command(UpCommand(
            model, hardware, variant, strategy, tuple(feature), tuple(no_feature), tuple(mode), engine, catalog,
            max_model_len, served_name, tuple(arg), tuple(env), kv_cache_space, docker, host, port, detach,
            force, dry_run, output_format, ready_timeout, kv_offload=kv_offload, image=image, volumes=tuple(volume),
            pull=pull))
        if code:
            raise SystemExit(code)

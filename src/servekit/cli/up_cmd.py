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
from dataclasses import dataclass, field
from typing import Any, Iterator

import typer

from servekit.errors import ServekitError

LOCAL = "local"


@dataclass(frozen=True)
class UpCommand:
    model: str
    hardware: str = LOCAL
    variant: str | None = None
    strategy: str | None = None
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    engine: str | None = None
    catalog: str | None = None
    max_model_len: int | None = None
    served_name: str | None = None
    extra_args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    kv_cache_space: float | None = None
    docker: bool = False
    host: str = "127.0.0.1"
    port: int | None = None
    detach: bool = False
    force: bool = False
    dry_run: bool = False
    output_format: str = "text"
    ready_timeout: float = 1800.0
    extra: dict[str, Any] = field(default_factory=dict)
    kv_offload: str | None = None
    image: str | None = None
    volumes: tuple[str, ...] = ()
    pull: str | None = None


def _env_pairs(values: tuple[str, ...], kv_space: float | None) -> dict[str, str]:
    from servekit.launch.prediction import kv_space_env

    env = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ServekitError(f"--env {item!r} is not NAME=VALUE", fix="e.g. --env OMP_NUM_THREADS=2")
        env[name] = value
    if kv_space is not None and (space_env := kv_space_env()):
        env[space_env] = f"{kv_space:g}"
    return env


def _engine_options(engine: str, machine: Any) -> dict[str, str]:
    from servekit.engines.registry import get_engine, native_engine

    return {} if get_engine(engine) is native_engine() or machine.gpus else {"devices": "cpu"}


def _recipe_plan(opts: UpCommand, engine: str, machine: Any, env: dict[str, str]):
    """(LaunchPlan, taxonomy profile or None) for a recipe, a checkpoint id, or a model directory's container form."""
    from servekit.app.overridden import plan_with_overrides
    from servekit.app.request import EngineOptions, PlanRequest
    from servekit.launch.recipe_plan import launch_plan_of
    from servekit.synthesis.overrides import Overrides
    from servekit.synthesis.resolve import parse_mode_pairs

    from servekit.launch.local_model import is_local_model

    options = _engine_options(engine, machine) if opts.hardware == LOCAL else {}
    # hardware local: a recipe's own default hardware; a model directory (its container form) this machine
    hardware = opts.hardware if opts.hardware != LOCAL or is_local_model(opts.model) else None
    request = PlanRequest(opts.model, hardware=hardware,
                          variant=opts.variant, strategy=opts.strategy, features=opts.features,
                          no_features=opts.no_features, modes=parse_mode_pairs(opts.modes), engine=engine,
                          engine_options=EngineOptions(devices=options.get("devices")), checks=False,
                          catalog=opts.catalog, kv_offload=opts.kv_offload)
    max_len = str(opts.max_model_len) if opts.max_model_len else None
    result = plan_with_overrides(request, Overrides(max_model_len=max_len, image=opts.image))
    launch = launch_plan_of(result.plan, result.commands, opts.port, env)
    from servekit.app.request import load_documents

    profiles = (load_documents(opts.catalog, result.selection.recipe_id).taxonomy or {}).get("hardware_profiles")
    return launch, (profiles or {}).get(result.selection.hardware)


def build_plan(opts: UpCommand, machine: Any):
    """(LaunchPlan, hardware name, fit profile)."""
    from servekit.engines.registry import get_engine, native_engine
    from servekit.launch.local_model import LocalOptions, is_local_model, local_model_plan

    engine = get_engine(opts.engine).id if opts.engine else native_engine().id
    env = _env_pairs(opts.env, opts.kv_cache_space)
    _check_form_options(opts)
    if is_local_model(opts.model) and not opts.docker:
        local = LocalOptions(max_model_len=opts.max_model_len, served_name=opts.served_name,
                             extra_args=opts.extra_args, env=env, features=opts.features,
                             engine_options=_engine_options(engine, machine))
        return local_model_plan(opts.model, engine, local), LOCAL, machine.fit_profile()
    launch, profile = _recipe_plan(opts, engine, machine, env)
    if opts.docker:
        launch = _with_container_options(launch, opts)
    if opts.hardware == LOCAL:
        return launch, LOCAL, machine.fit_profile()
    return launch, opts.hardware, profile or {}


def _check_form_options(opts: UpCommand) -> None:
    """Options the chosen form does not read: an error rather than silence."""
    from servekit.launch.local_model import is_local_model

    container = [n for n, v in (("--image", opts.image), ("--volume", opts.volumes), ("--pull", opts.pull)) if v]
    local = [n for n, v in (("--served-model-name", opts.served_name), ("--arg", opts.extra_args)) if v]
    if container and not opts.docker:
        raise ServekitError(f"{', '.join(container)} {'set' if len(container) > 1 else 'sets'} the container form, "
                            "which only --docker runs", fix="add --docker, or leave them out")
    if local and (opts.docker or not is_local_model(opts.model)):
        raise ServekitError(f"{', '.join(local)} {'apply' if len(local) > 1 else 'applies'} only to a local model "
                            "directory run without --docker",
                            fix="leave them out: a recipe and a container form set the server's arguments")


def _with_container_options(launch: Any, opts: UpCommand) -> Any:
    """The plan's ``docker run`` commands with ``--volume``, ``--pull`` and ``--host`` set."""
    from dataclasses import replace

    from servekit.launch.docker_run import ContainerOptions, container_command

    options = ContainerOptions(tuple(opts.volumes), opts.pull, opts.host)
    return replace(launch, docker_commands=tuple(container_command(c, options) for c in launch.docker_commands))


def _print_dry_run(plan: Any, pre: Any, opts: UpCommand) -> None:
    if opts.output_format == "json":
        typer.echo(json.dumps({"plan": plan.to_dict(), "checks": pre.to_dict()}, indent=2))
        return
    typer.echo(f"# {plan.source}: engine {plan.engine}, served as {plan.served_name}")
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


def runs_here(profile: Any, machine: Any) -> bool:
    """A named hardware profile runs on this machine when it is of this machine's kind (cpu or gpu)."""
    from servekit.hardware import profile_of

    if not profile:
        return False
    try:
        return profile_of(dict(profile or {})).kind == machine.kind
    except (ServekitError, ValueError, TypeError, KeyError):
        return False


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
    from servekit.launch.prediction import predict
    from servekit.launch.prelaunch import prelaunch

    if opts.output_format not in ("text", "json"):
        raise ServekitError(f"--format {opts.output_format!r} is not text or json")
    machine = detect()
    plan, hardware, profile = build_plan(opts, machine)
    pre = prelaunch(plan, predict(plan, profile, hardware), docker=opts.docker)
    if opts.dry_run:
        _print_dry_run(plan, pre, opts)
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

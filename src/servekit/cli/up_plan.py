"""What ``servekit up`` starts: the launch plan of MODEL, the hardware it is planned for, and the
fit prediction it is checked against.

Hardware ``local`` (the default) is this machine, described by ``servekit.launch.machine``: its
GPUs, or one CPU node with the memory available now. A recipe or checkpoint is planned for that
entry (never for the catalog's default device), so the command, the docker form and the fit
check all speak of this machine. A local model directory runs as ``vllm serve DIR``; its
container form is the one ``servekit plan DIR --docker`` prints. On a CPU the KV-cache space is
then set to the pool the fit predicted (``servekit.launch.prediction.pinned_kv_space``) unless
the command sets it, so the pool the engine reports is the prediction whatever else runs here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field, replace
from typing import Any

from servekit.errors import ServekitError
from servekit.records import record

LOCAL = "local"


@record
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


@record
class UpPlan:
    plan: Any
    """The ``LaunchPlan``."""
    hardware: str
    profile: Mapping[str, Any]
    """The taxonomy entry the plan and its fit check are for."""
    fit: Any
    """The ``FitCheck`` of its engine server (None without model facts)."""


Planner = Callable[[Mapping[str, str]], Any]
"""The launch plan with this env over the plan's own (in its container form too)."""


def env_pairs(values: tuple[str, ...], kv_space: float | None) -> dict[str, str]:
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


def _recipe_plan(opts: UpCommand, engine: str, machine: Any) -> tuple[Planner, Any]:
    """(the launch plan for an env, taxonomy entry or None) of a recipe, a checkpoint id, or a
    model directory's container form; hardware ``local`` is this machine's entry."""
    from servekit.app.overridden import plan_with_overrides
    from servekit.app.request import EngineOptions, PlanRequest, load_documents
    from servekit.launch.machine import with_this_machine
    from servekit.launch.recipe_plan import launch_plan_of
    from servekit.synthesis.overrides import Overrides
    from servekit.synthesis.resolve import parse_mode_pairs

    local = opts.hardware == LOCAL
    docs = with_this_machine(load_documents(opts.catalog), machine) if local else None
    options = _engine_options(engine, machine) if local else {}
    request = PlanRequest(opts.model, hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy,
                          features=opts.features, no_features=opts.no_features, modes=parse_mode_pairs(opts.modes),
                          engine=engine, engine_options=EngineOptions(devices=options.get("devices")), checks=False,
                          catalog=opts.catalog, kv_offload=opts.kv_offload, documents=docs)
    max_len = str(opts.max_model_len) if opts.max_model_len else None
    result = plan_with_overrides(request, Overrides(max_model_len=max_len, image=opts.image))
    docs = docs or load_documents(opts.catalog, result.selection.recipe_id)
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(result.selection.hardware)

    def make(env: Mapping[str, str]) -> Any:
        launch = launch_plan_of(result.plan, result.commands, opts.port, env)
        return _with_container_options(launch, opts) if opts.docker else launch

    return make, profile


def _planner(opts: UpCommand, machine: Any) -> tuple[Planner, str, Mapping[str, Any]]:
    """(the launch plan for an env, hardware name, taxonomy entry)."""
    from servekit.engines.registry import get_engine, native_engine
    from servekit.launch.local_model import LocalOptions, is_local_model, local_model_plan

    engine = get_engine(opts.engine).id if opts.engine else native_engine().id
    _check_form_options(opts)
    if is_local_model(opts.model) and not opts.docker:
        if opts.hardware != LOCAL:
            raise ServekitError(f"--hardware {opts.hardware}: a local model directory runs here, on this machine",
                                fix="leave out --hardware, or add --docker for its container form on that hardware")

        def local(env: Mapping[str, str]) -> Any:
            options = LocalOptions(max_model_len=opts.max_model_len, served_name=opts.served_name,
                                   extra_args=opts.extra_args, env=env, features=opts.features,
                                   engine_options=_engine_options(engine, machine))
            return local_model_plan(opts.model, engine, options)

        return local, LOCAL, machine.fit_profile()
    make, profile = _recipe_plan(opts, engine, machine)
    return make, opts.hardware, profile or {}


def build_plan(opts: UpCommand, machine: Any) -> UpPlan:
    """The plan ``up`` checks and starts, with its prediction; on this machine's CPU, with the
    KV-cache space the prediction sized."""
    from servekit.launch.prediction import pinned_kv_space, predict

    make, hardware, profile = _planner(opts, machine)
    env = env_pairs(opts.env, opts.kv_cache_space)
    plan = make(env)
    fit = predict(plan, profile, hardware)
    if hardware == LOCAL and machine.kind == "cpu" and (pinned := pinned_kv_space(plan, fit)):
        plan = make({**env, **pinned})
        fit = predict(plan, profile, hardware)
    return UpPlan(plan, hardware, profile, fit)


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
    from servekit.launch.docker_run import ContainerOptions, container_command

    options = ContainerOptions(tuple(opts.volumes), opts.pull, opts.host)
    return replace(launch, docker_commands=tuple(container_command(c, options) for c in launch.docker_commands))


def runs_here(profile: Any, machine: Any) -> bool:
    """A named hardware profile runs on this machine when it is of this machine's kind (cpu or gpu)."""
    from servekit.hardware import profile_of

    if not profile:
        return False
    try:
        return profile_of(dict(profile or {})).kind == machine.kind
    except (ServekitError, ValueError, TypeError, KeyError):
        return False

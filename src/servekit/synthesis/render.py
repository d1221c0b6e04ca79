"""Plan -> the reference JSON API's rendering object, key for key.

Every command object the static API writes goes through ``render_plan``; servekit's own
additions (provenance, notes, install steps) come from ``servekit_extras`` under new keys.
"""

from __future__ import annotations

from typing import Any

from servekit.synthesis import shell
from servekit.synthesis.docker import RayNode, docker_argv, docker_command, ray_docker_keys
from servekit.synthesis.plan import Plan, Process


class _Rendered:
    """argv, shell lines and command of one process, computed once."""

    __slots__ = ("argv", "lines", "command", "model", "program_length")

    def __init__(self, proc: Process) -> None:
        self.argv = proc.argv()
        self.model = proc.model
        self.program_length = len(proc.program)
        flags = proc.flags()
        self.lines = shell.arg_lines(flags)
        program = " ".join(shell.quote(t) for t in proc.command_words())
        self.command = shell.command(program, flags, self.lines)


def process_command(proc: Process) -> str:
    """One process's command line as shell text, as the rendering object writes its commands."""
    return _Rendered(proc).command


def _docker(plan: Plan, proc: Process | _Rendered, env: dict[str, Any], port: int = 8000) -> dict[str, Any]:
    if plan.docker.image is None:
        return {}
    done = proc if isinstance(proc, _Rendered) else _Rendered(proc)
    return {
        "docker_command": docker_command(plan.docker, done.argv, env, port, done.program_length),
        "docker_argv": docker_argv(plan.docker, done.argv, env, port, done.program_length),
    }


def _base(plan: Plan) -> dict[str, Any]:
    sel = plan.selection
    out: dict[str, Any] = {
        "hardware": sel.hardware, "strategy": sel.strategy, "variant": sel.variant,
        "node_count": sel.node_count, "deploy_type": plan.deploy_type, "env": plan.env_map(),
    }
    if plan.docker.image is not None:
        out["docker_image"] = plan.docker.image
    return out


def _multi_node(plan: Plan, out: dict[str, Any]) -> dict[str, Any]:
    head, workers = _Rendered(plan.role("head")[0]), [_Rendered(w) for w in plan.role("worker")]
    env = plan.env_map()
    out.update({
        "head_command": head.command, "worker_command": workers[0].command,
        "worker_commands": [w.command for w in workers],
        "head_argv": head.argv, "worker_argv": workers[0].argv, "worker_argvs": [w.argv for w in workers],
    })
    if plan.extra("ray_head_argv"):
        return _ray_form(plan, head, workers, env, out)
    if plan.docker.image is not None:
        head_docker = _docker(plan, head, env)
        worker_dockers = [_docker(plan, w, env) for w in workers]
        out.update({
            "head_docker_command": head_docker["docker_command"],
            "worker_docker_command": worker_dockers[0]["docker_command"],
            "worker_docker_commands": [d["docker_command"] for d in worker_dockers],
            "head_docker_argv": head_docker["docker_argv"], "worker_docker_argv": worker_dockers[0]["docker_argv"],
            "worker_docker_argvs": [d["docker_argv"] for d in worker_dockers],
        })
    return out


def _ray_form(plan: Plan, head: _Rendered, workers: list[_Rendered], env: dict[str, Any],
              out: dict[str, Any]) -> dict[str, Any]:
    """The Ray form's keys: Ray's head, started on the head before ``vllm serve``; in containers,
    every node's Ray container (``head_docker_*``, detached, and ``worker_docker_*``), the wait for
    Ray's head (``ray_ready_command``), and ``vllm serve`` run inside the head's container
    (``head_exec_*``)."""
    ray_head = [str(w) for w in plan.extra("ray_head_argv")]
    out.update({"ray_head_argv": ray_head, "ray_head_command": " ".join(shell.quote(w) for w in ray_head)})
    if plan.docker.image is None:
        return out
    nodes = [RayNode(plan.docker, tuple(head.argv), env, head.program_length, True),
             *(RayNode(plan.docker, tuple(w.argv), env, w.program_length, False) for w in workers)]
    out.update(ray_docker_keys(nodes, str(head.model or ""), ray_head))
    return out


def _pd_cluster(plan: Plan, out: dict[str, Any]) -> dict[str, Any]:
    for proc in plan.role("prefill") + plan.role("decode"):
        env, done = proc.env_map(), _Rendered(proc)
        out[proc.role] = {"command": done.command, "argv": done.argv, "env": env, **dict(proc.meta),
                          **_docker(plan, done, env, proc.port or 8000)}
    out["router"] = dict(plan.router or ())
    out["router_config"] = plan.extra("router_config")
    return out


def _kv_store(plan: Plan, out: dict[str, Any]) -> dict[str, Any]:
    sel = plan.selection
    head, workers = _Rendered(plan.processes[0]), [_Rendered(p) for p in plan.processes[1:]]
    env = plan.env_map()
    worker_dockers = [_docker(plan, w, env) for w in workers]
    head_docker = _docker(plan, head, env)
    out.update({
        "strategy": sel.kv_offload, "serving_strategy": plan.extra("serving_strategy"),
        "kv_min_vllm_version": plan.extra("kv_min_vllm_version"), "env": env, "node_count": sel.node_count,
        "instances": plan.extra("instances"), "vllm_command": head.command, "vllm_argv": head.argv,
        "vllm_worker_command": workers[0].command if workers else None,
        "vllm_worker_commands": [w.command for w in workers] if workers else None,
        "vllm_worker_argv": workers[0].argv if workers else None,
        "vllm_worker_argvs": [w.argv for w in workers] if workers else None,
        "vllm_worker_docker_command": worker_dockers[0].get("docker_command") if workers else None,
        "vllm_worker_docker_argv": worker_dockers[0].get("docker_argv") if workers else None,
        "vllm_worker_docker_commands": [d.get("docker_command") for d in worker_dockers] if workers else None,
        "vllm_worker_docker_argvs": [d.get("docker_argv") for d in worker_dockers] if workers else None,
        "vllm_install": plan.extra("install"),
        "vllm_docker_command": head_docker.get("docker_command"), "vllm_docker_argv": head_docker.get("docker_argv"),
        "master": plan.extra("master"), "store": plan.extra("store"),
        "router": None if plan.router is None else dict(plan.router),
        "mooncake_config": plan.extra("mooncake_config"),
        "mooncake_config_note": plan.extra("mooncake_config_note") or "",
    })
    return out


def render_plan(plan: Plan) -> dict[str, Any]:
    """The rendering object the reference API writes for this plan."""
    out = _base(plan)
    if plan.deploy_type == "kv_store_lb":
        return _kv_store(plan, out)
    if plan.deploy_type == "pd_cluster":
        return _pd_cluster(plan, out)
    if plan.role("head"):
        return _multi_node(plan, out)
    done = _Rendered(plan.processes[0])
    out.update({"command": done.command, "argv": done.argv, **_docker(plan, done, plan.env_map())})
    if plan.extra("companions"):
        out["companions"] = plan.extra("companions")
    return out


def install_json(steps) -> list[dict[str, Any]]:
    """Install steps as JSON: kind, command, note, the page or key each follows, its family, the
    install forms it belongs to (``pip``, ``docker``) and whether the recipe marks it optional."""
    return [{"kind": s.kind, "command": s.command, **({"note": s.note} if s.note else {}),
             **({"source": s.source} if s.source else {}), **({"family": s.family} if s.family else {}),
             "forms": list(s.install_forms()), **({"optional": True} if s.optional else {})}
            for s in steps]


def servekit_extras(plan: Plan) -> dict[str, Any]:
    """servekit's additions: provenance per process (and of the install steps), install steps,
    min version, notes."""
    provenance: dict[str, Any] = {
        f"{p.role}{'' if p.rank == 0 else f'[{p.rank}]'}": {"args": p.provenance(), "env": {v.name: v.source for v in p.env}}
        for p in plan.processes}
    provenance["install"] = {"steps": [{"kind": s.kind, "family": s.family, "source": s.source} for s in plan.install]}
    return {
        "provenance": provenance,
        "docker_image_source": plan.docker.source,
        "install": install_json(plan.install),
        "min_vllm_version": plan.min_version,
        "min_vllm_version_source": list(plan.min_version_sources),
        "model_id": plan.model_id,
        "features": list(plan.selection.features),
        "modes": dict(plan.selection.modes),
        "notes": list(plan.notes),
    }

"""A plan in another engine's form as a rendering object.

``servekit.engines.plan_translate`` turns each vLLM process into an engine launch; this module
lays those launches over the plan's rendering object so the contract keys stay top-level:
``argv`` / ``command`` / ``env`` / ``docker_image`` are the engine's, an engine adds its own keys
(``Engine.plan_fields``, e.g. MAX's ``warm_cache_argv``), and ``precompile``, ``untranslated``
and ``findings`` say what else runs, what did not carry over and what is wrong. The vLLM docker wrapping does not apply and is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servekit.engines.registry import get_engine

if TYPE_CHECKING:
    from servekit.engines.common.translation import EngineLaunch

VLLM_ONLY_KEYS = ("docker_command", "docker_argv", "head_docker_command", "worker_docker_command",
                  "worker_docker_commands", "head_docker_argv", "worker_docker_argv", "worker_docker_argvs",
                  "vllm_docker_command", "vllm_docker_argv", "companions")


def _command_fields(cmd: EngineLaunch) -> dict[str, Any]:
    data = cmd.to_dict()
    out = {"argv": data["argv"], "command": data["command"], "env": data["env"],
           "precompile": data["precompile"], "untranslated": data["untranslated"], "findings": data["findings"],
           "valid": data["valid"]}
    if data["image"] is not None:
        out["docker_image"] = data["image"]
    out.update(get_engine(cmd.engine).plan_fields(cmd))
    return out


def render_engine_plan(rendered: dict[str, Any], commands: list, engine: str) -> dict[str, Any]:
    """``rendered`` (the vLLM rendering object) with every process replaced by its engine command."""
    out = {k: v for k, v in rendered.items() if k not in VLLM_ONLY_KEYS}
    out["engine"] = engine
    by_role: dict[str, list] = {}
    for pc in commands:
        by_role.setdefault(pc.role, []).append(pc)
    if "serve" in by_role:
        out.update(_command_fields(by_role["serve"][0].command))
    if "head" in by_role:
        head = _command_fields(by_role["head"][0].command)
        workers = [_command_fields(pc.command) for pc in by_role.get("worker", [])]
        out.update(head_argv=head["argv"], head_command=head["command"], env=head["env"],
                   worker_argvs=[w["argv"] for w in workers], worker_commands=[w["command"] for w in workers])
        if workers:
            out.update(worker_argv=workers[0]["argv"], worker_command=workers[0]["command"])
        out["findings"] = [f for c in [head, *workers] for f in c["findings"]]
        out["untranslated"] = head["untranslated"]
        out["valid"] = head["valid"] and all(w["valid"] for w in workers)
    for role in ("prefill", "decode"):
        if role in by_role and isinstance(out.get(role), dict):
            fields = _command_fields(by_role[role][0].command)
            role_doc = {k: v for k, v in out[role].items() if k not in VLLM_ONLY_KEYS}
            out[role] = {**role_doc, **fields}
    if "valid" not in out:
        out["valid"] = all(pc.command.valid for pc in commands)
    return out

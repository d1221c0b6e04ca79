"""Container image and ``docker run`` form per hardware platform and image.

Image precedence: the variant's exact-hardware ``docker_image``; the variant's, then the
model's ``docker_image`` (a bare string pins NVIDIA only; a map is keyed by brand, and
NVIDIA's value may be a ``{cu129, cu130}`` map); the brand's default image.

A ``docker run`` form is built from three sources of rules, each flag written once:
the hardware's container rules (``HardwareProfile.container``: devices, security, shared
memory, whether the platform needs the host network), the plan's shape (a plan whose servers
span several machines uses the host network, so the collective libraries' interface names
(``NCCL_SOCKET_IFNAME``, ``GLOO_SOCKET_IFNAME``) name the node's own interfaces and the
engines' ports are reachable without ``-p``), and the image's facts (``servekit.synthesis.images``:
whether its entrypoint is the serve program, or the command must be passed whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from servekit.hardware import HardwareProfile, profile_of
from servekit.records import record
from servekit.synthesis.context import Context
from servekit.synthesis.images import ImageFacts, container_command, in_image_words, is_image_reference
from servekit.synthesis.install_families import ASCEND
from servekit.synthesis.plan import Docker
from servekit.synthesis.shell import arg_lines, quote, quote_word, text

DEFAULT_IMAGES = {
    "nvidia": "vllm/vllm-openai:latest",
    "amd": "vllm/vllm-openai-rocm:latest",
    "tpu": "vllm/vllm-tpu:latest",
    "intel": "vllm/vllm-openai-cpu:latest-x86_64",
    "npu": f"quay.io/ascend/vllm-ascend:v{ASCEND.version_pinned}",
}
NIGHTLY_IMAGES = {
    "nvidia": "vllm/vllm-openai:nightly",
    "amd": "vllm/vllm-openai-rocm:nightly",
    "tpu": "vllm/vllm-tpu:nightly",
    "npu": f"quay.io/ascend/vllm-ascend:v{ASCEND.version_pinned}",
}
XPU_IMAGE = "vllm/vllm-openai-xpu:latest"
ARM_CPU_IMAGE = "vllm/vllm-openai-cpu:latest-arm64"
"""vLLM's Arm CPU image (docs/getting_started/installation/cpu.arm.inc.md)."""
HF_CACHE_MOUNT = "~/.cache/huggingface:/root/.cache/huggingface"
BRAND_KEYS = ("nvidia", "amd", "tpu", "intel", "npu", "qaic")
"""Keys of a brand-keyed ``docker_image`` map (a profile's ``image_key``). ``qaic`` (Qualcomm
Cloud AI) has no public default image: without a pin its plans carry no docker form."""
HOST_NETWORK = ("--network", "host")
MULTI_NODE_DEPLOYS = ("pd_cluster", "kv_store_lb")
"""Deploy types whose servers run on machines of their own (prefill and decode pools; the
instances behind a Mooncake store) even when the plan counts one node."""


def brand_key(profile: dict[str, Any]) -> str:
    """The ``docker_image`` map key of a taxonomy entry (``HardwareProfile.image_key``)."""
    return profile_of(profile).image_key


def _is_cuda_map(value: Any) -> bool:
    return isinstance(value, dict) and ("cu129" in value or "cu130" in value)


def image_override(override: Any, key: str) -> tuple[str | None, dict | None]:
    """(pinned image, CUDA map) that one ``docker_image`` value gives this brand."""
    if isinstance(override, str):
        return (override if key == "nvidia" else None), None
    if not isinstance(override, dict):
        return None, None
    if any(k in override for k in BRAND_KEYS):
        value = override.get(key)
        if isinstance(value, str):
            return value, None
        return None, (value if key == "nvidia" and _is_cuda_map(value) else None)
    return None, (override if key == "nvidia" and _is_cuda_map(override) else None)


def default_image(hw: HardwareProfile, nightly: bool = False) -> tuple[str | None, str]:
    """(image, why) of the platform's own image when nothing pins one."""
    if hw.platform == "xpu":
        return XPU_IMAGE, "default image (Intel XPU)"
    if hw.platform == "cpu" and hw.cpu_arch == "aarch64":
        return (None if nightly else ARM_CPU_IMAGE), "default image (Arm CPU)"
    key = hw.image_key
    return (NIGHTLY_IMAGES if nightly else DEFAULT_IMAGES).get(key), f"default image ({key}{', nightly' if nightly else ''})"


def docker_on(hw: HardwareProfile, image: str | None, source: str, nodes: int = 1) -> Docker:
    """The container form of ``image`` on ``hw`` for a plan spanning ``nodes`` machines."""
    return Docker(image, hw.container, source, nodes > 1)


def docker_for(ctx: Context) -> Docker:
    key = ctx.hw.image_key
    exact = block.docker_image if (block := ctx.variant.exact_block(ctx.sel.hardware)) is not None else None
    pinned = exact if isinstance(exact, str) else None
    source = f"{ctx.variant_path}.hardware_overrides.{ctx.sel.hardware}.docker_image" if pinned else ""
    cuda_map = None
    for override, path in ((ctx.variant.docker_image, f"{ctx.variant_path}.docker_image"),
                           (ctx.recipe.model.docker_image, "model.docker_image")):
        if pinned or cuda_map:
            break
        pinned, cuda_map = image_override(override, key)
        if pinned or cuda_map:
            source = path
    if pinned and not is_image_reference(pinned):
        image, source = None, f"{source} is not an image reference: {pinned!r} (fix: write the image name alone)"
    elif pinned:
        image = pinned
    elif cuda_map:
        image = cuda_map.get("cu130") or cuda_map.get("cu129")
    else:
        image, source = default_image(ctx.hw, ctx.recipe.model.nightly_required)
    several = ctx.sel.node_count > 1 or ctx.deploy_type in MULTI_NODE_DEPLOYS
    return replace(docker_on(ctx.hw, image, source, 2 if several else 1),
                   source_mount=ctx.recipe.model.docker_source_path)


def _model_word(argv: Sequence[Any], program_length: int) -> str:
    """The model a command serves: its positional after the program, or its ``--model-path`` value."""
    rest = [str(w) for w in argv[program_length:]]
    if rest and not rest[0].startswith("-"):
        return rest[0]
    for flag in ("--model-path", "--model"):
        if flag in rest[:-1]:
            return rest[rest.index(flag) + 1]
    return ""


def _mounts(docker: Docker, model: str, env: dict[str, Any]) -> list[str]:
    local = [f"{model}:{model}:ro"] if model.startswith("/") else []
    source = [f"{docker.source_mount}:{docker.source_mount}:ro"] if docker.source_mount else []
    return local + source + [f"{text(v)}:{text(v)}:ro" for k, v in env.items() if k.endswith("_CONFIG_PATH")]


def _container_env(docker: Docker, env: dict[str, Any]) -> dict[str, Any]:
    """The env a container gets: the command's, with a mounted source checkout first on PYTHONPATH."""
    if not docker.source_mount:
        return env
    given = text(env["PYTHONPATH"]) if env.get("PYTHONPATH") is not None else ""
    return {**env, "PYTHONPATH": docker.source_mount + (f":{given}" if given else "")}


def host_network(docker: Docker) -> bool:
    """The container shares the host's network: the platform needs it, or the plan spans machines."""
    return docker.devices.host_network or docker.several_nodes


def runtime_flags(docker: Docker, port: int) -> list[str]:
    """Security, shared memory and network flags, each once; ``-p`` only on Docker's own network."""
    rules = docker.devices
    network = list(HOST_NETWORK) if host_network(docker) else ["-p", f"{port}:{port}"]
    return [*rules.security, *rules.shared_memory, *network]


RAY_CONTAINER = "servekit-ray"
"""The container a node of the Ray form runs Ray in (``--name``): on the head, ``vllm serve`` runs
inside it (``docker exec``), as vLLM's examples/online_serving/run_cluster.sh and tpu-inference's
scripts/multihost/run_cluster.sh lay a Ray cluster out in containers."""


@record
class Container:
    """How a ``docker run`` holds its container: a name to reach it by, detached or in the foreground,
    and the model its command loads when the command does not name it (a Ray node's ``ray start``)."""

    name: str | None = None
    detach: bool = False
    model: str | None = None


def _naming(container: Container) -> list[str]:
    return [*(["-d"] if container.detach else []), *(["--name", container.name] if container.name else [])]


def docker_argv(docker: Docker, argv: Sequence[Any], env: dict[str, Any], port: int = 8000,
                program_length: int = 2, images: Sequence[ImageFacts] = (),
                container: Container = Container()) -> list[Any]:
    """``docker run`` argv for the command ``argv`` (its program is its first ``program_length``
    words), placed for the image's entrypoint (``images``: an engine's own image facts)."""
    placed = container_command(docker.image, argv, program_length, images)
    out: list[Any] = ["docker", "run", *_naming(container), *docker.devices.argv, *runtime_flags(docker, port),
                      "-v", HF_CACHE_MOUNT]
    model = container.model if container.model is not None else _model_word(argv, program_length)
    for mount in _mounts(docker, model, env):
        out += ["-v", mount]
    for name, value in _container_env(docker, env).items():
        out += ["-e", f"{name}={text(value)}"]
    if placed.entrypoint:
        out += ["--entrypoint", placed.entrypoint]
    return [*out, docker.image, *placed.words]


def docker_command(docker: Docker, argv: Sequence[Any], env: dict[str, Any], port: int = 8000,
                   program_length: int = 2, images: Sequence[ImageFacts] = (),
                   container: Container = Container()) -> str:
    """The shell form of ``docker_argv``, one group of flags per line; it splits back to that argv."""
    placed = container_command(docker.image, argv, program_length, images)
    named = _model_word(argv, program_length)
    model = container.model if container.model is not None else named
    joiner = " \\\n  "
    first = " ".join(["docker run", *_naming(container), *docker.devices.lines[:1]])
    lines = [first, *docker.devices.lines[1:], " ".join(runtime_flags(docker, port)), f"-v {HF_CACHE_MOUNT}"]
    lines += [f"-v {quote_word(m)}" for m in _mounts(docker, model, env)]
    lines += [f"-e {quote_word(f'{k}={text(v)}')}" for k, v in _container_env(docker, env).items()]
    if placed.entrypoint:
        lines.append(f"--entrypoint {quote(placed.entrypoint)}")
    positional = 1 if [str(w) for w in argv[program_length:program_length + 1]] == [named] and named else 0
    count = max(0, len(argv) - program_length - positional)
    flags = list(placed.words[len(placed.words) - count:]) if count else []
    head = list(placed.words[:len(placed.words) - count])
    on_host = [p for p in (model if model.startswith("/") else None, docker.source_mount) if p]
    prereq = "".join(f"# {path} must already exist on the host — bind-mounted read-only below.\n" for path in on_host)
    body = joiner.join([*lines, " ".join(quote(w) for w in [docker.image or "null", *head])])
    if flags:
        body += joiner + joiner.join(arg_lines(flags))
    return prereq + body


def ray_ready_command(name: str = RAY_CONTAINER) -> str:
    """Waits until the Ray node in container ``name`` answers (``ray status`` exits 0 once the
    cluster it belongs to runs): a detached ``docker run`` returns before Ray has started, and a
    ``vllm serve`` that finds no running cluster would start a Ray of its own."""
    return f"until docker exec {name} ray status >/dev/null 2>&1; do sleep 2; done"


def ray_node_docker(docker: Docker, argv: Sequence[Any], env: dict[str, Any], port: int, program_length: int,
                    model: str, ray_head: Sequence[Any] | None = None) -> tuple[str | None, str]:
    """(the head's Ray container, the command) of one node of the Ray form in containers, its Ray in a
    container named ``RAY_CONTAINER``: a worker's ``ray start`` is its container's command (no head
    container); the head's container runs Ray's head (``ray_head``) detached, and once it answers
    (``ray_ready_command``) the head's command is ``argv`` (the server) run inside that container.
    ``model``: what the nodes load (mounted where it is a local path)."""
    if ray_head is None:
        return None, docker_command(docker, argv, env, port, program_length,
                                    container=Container(RAY_CONTAINER, model=model))
    head = docker_command(docker, [*ray_head, "--block"], env, port, 2, container=Container(RAY_CONTAINER, True, model))
    return head, exec_command(_in_image(docker, argv, program_length), program_length)


def ray_node_docker_argv(docker: Docker, argv: Sequence[Any], env: dict[str, Any], port: int, program_length: int,
                         model: str, ray_head: Sequence[Any] | None = None) -> tuple[list[Any] | None, list[Any]]:
    """``ray_node_docker`` as argvs: (the head's ``docker run -d`` of Ray's head, or None; the command)."""
    if ray_head is None:
        return None, docker_argv(docker, argv, env, port, program_length,
                                 container=Container(RAY_CONTAINER, model=model))
    head = docker_argv(docker, [*ray_head, "--block"], env, port, 2, container=Container(RAY_CONTAINER, True, model))
    return head, exec_argv(_in_image(docker, argv, program_length))


def _in_image(docker: Docker, argv: Sequence[Any], program_length: int) -> list[Any]:
    """``argv`` with its paths into vLLM's examples as ``docker``'s image keeps them."""
    return [*argv[:program_length], *in_image_words(docker.image, argv[program_length:])]


@record
class RayNode:
    """One node of the Ray form as its container runs it: the node's command (the server on the
    head, ``ray start`` on a worker), in ``docker``'s image with ``env``."""

    docker: Docker
    argv: tuple[Any, ...]
    env: dict[str, Any]
    program_length: int
    head: bool


def ray_docker_keys(nodes: Sequence[RayNode], model: str, ray_head: Sequence[Any],
                    port: int = 8000) -> dict[str, Any]:
    """The rendering object's keys of the Ray form in containers: the head's Ray container
    (``head_docker_*``, detached), the wait for it (``ray_ready_command``), the server run inside
    it (``head_exec_*``) and each worker's container (``worker_docker_*``). One home for the key
    set, whichever engine renders the nodes' commands."""
    out: dict[str, Any] = {}
    joins: list[tuple[str, list[Any]]] = []
    for node in nodes:
        args = (node.docker, list(node.argv), node.env, port, node.program_length, model,
                ray_head if node.head else None)
        (first, command), (first_argv, argv) = ray_node_docker(*args), ray_node_docker_argv(*args)
        if node.head:
            out.update({"head_docker_command": first, "head_docker_argv": first_argv,
                        "ray_ready_command": ray_ready_command(), "head_exec_command": command,
                        "head_exec_argv": argv})
        else:
            joins.append((command, argv))
    if joins:
        out.update({"worker_docker_command": joins[0][0], "worker_docker_commands": [c for c, _ in joins],
                    "worker_docker_argv": joins[0][1], "worker_docker_argvs": [a for _, a in joins]})
    return out


def exec_argv(argv: Sequence[Any], name: str = RAY_CONTAINER) -> list[Any]:
    """``argv`` run inside the running container ``name`` (it keeps the env its ``docker run`` gave)."""
    return ["docker", "exec", name, *argv]


def exec_command(argv: Sequence[Any], program_length: int, name: str = RAY_CONTAINER) -> str:
    """The shell form of ``exec_argv``: the program and its model on the first line, then one flag a line."""
    model = _model_word(argv, program_length)
    positional = 1 if [str(w) for w in argv[program_length:program_length + 1]] == [model] and model else 0
    words = ["docker", "exec", name, *argv[:program_length + positional]]
    flags = list(argv[program_length + positional:])
    return " \\\n  ".join([" ".join(quote(w) for w in words), *arg_lines(flags)])

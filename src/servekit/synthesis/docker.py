"""Container image and ``docker run`` wrapping per hardware brand (the device flags are the
profile's: ``HardwareProfile.container``).

Image precedence: the variant's exact-hardware ``docker_image``; the variant's, then the
model's ``docker_image`` (a bare string pins NVIDIA only; a map is keyed by brand, and
NVIDIA's value may be a ``{cu129, cu130}`` map); the brand's default image.
"""

from __future__ import annotations

from typing import Any

from servekit.hardware import profile_of
from servekit.synthesis.context import Context
from servekit.synthesis.plan import Docker
from servekit.synthesis.shell import quote, quote_word, text

DEFAULT_IMAGES = {
    "nvidia": "vllm/vllm-openai:latest",
    "amd": "vllm/vllm-openai-rocm:latest",
    "tpu": "vllm/vllm-tpu:latest",
    "intel": "vllm/vllm-openai-cpu:latest-x86_64",
    "npu": "quay.io/ascend/vllm-ascend:v0.23.0",
}
NIGHTLY_IMAGES = {
    "nvidia": "vllm/vllm-openai:nightly",
    "amd": "vllm/vllm-openai-rocm:nightly",
    "tpu": "vllm/vllm-tpu:nightly",
    "npu": "quay.io/ascend/vllm-ascend:v0.23.0",
}
XPU_IMAGE = "vllm/vllm-openai-xpu:latest"
HF_CACHE_MOUNT = "~/.cache/huggingface:/root/.cache/huggingface"
BRAND_KEYS = ("nvidia", "amd", "tpu", "intel", "npu", "qaic")
"""Keys of a brand-keyed ``docker_image`` map (a profile's ``image_key``). ``qaic`` (Qualcomm
Cloud AI) has no public default image: without a pin its plans carry no docker form."""


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
    nightly = ctx.recipe.model.nightly_required
    if ctx.hw.platform == "xpu" and not pinned:
        image, source = XPU_IMAGE, "default image (Intel XPU)"
    elif pinned:
        image = pinned
    elif cuda_map:
        image = cuda_map.get("cu130") or cuda_map.get("cu129")
    else:
        image = (NIGHTLY_IMAGES if nightly else DEFAULT_IMAGES).get(key)
        source = f"default image ({key}{', nightly' if nightly else ''})"
    devices = ctx.hw.container
    return Docker(image, devices.argv, devices.lines, devices.runtime, source)


def _mounts(model: str, env: dict[str, Any]) -> list[str]:
    local = [f"{model}:{model}:ro"] if model.startswith("/") else []
    return local + [f"{text(v)}:{text(v)}:ro" for k, v in env.items() if k.endswith("_CONFIG_PATH")]


CPU_RUNTIME = ("--security-opt", "seccomp=unconfined", "--cap-add", "SYS_NICE")
"""The CPU backend's container options, without ``--privileged`` (which asks for every capability):
vLLM's "Launching the OpenAI server" for x86 CPU images, docs/getting_started/installation/cpu.x86.inc.md
(github.com/vllm-project/vllm)."""


def _runtime(docker: Docker, port: int) -> tuple[list[str], str]:
    if docker.runtime == "cpu":
        return [*CPU_RUNTIME, "-p", f"{port}:{port}"], f"{' '.join(CPU_RUNTIME)} -p {port}:{port}"
    if docker.runtime == "npu":
        return ["--privileged", "--net=host", "--shm-size", "16g"], "--privileged --net=host --shm-size 16g"
    return ["--privileged", "--ipc=host", "-p", f"{port}:{port}"], f"--privileged --ipc=host -p {port}:{port}"


def docker_argv(docker: Docker, argv: list[Any], env: dict[str, Any], port: int = 8000) -> list[Any]:
    """``docker run`` argv: the image's entrypoint is ``vllm serve``, so MODEL + flags follow."""
    inner = argv[2:] if argv[:2] == ["vllm", "serve"] else argv  # the image's entrypoint is `vllm serve`
    runtime, _ = _runtime(docker, port)
    out: list[Any] = ["docker", "run", *docker.device_argv, *runtime, "-v", HF_CACHE_MOUNT]
    for mount in _mounts(str(inner[0]) if inner else "", env):
        out += ["-v", mount]
    for name, value in env.items():
        out += ["-e", f"{name}={text(value)}"]
    return [*out, docker.image, *inner]


def docker_command(docker: Docker, model: str, arg_lines: list[str], env: dict[str, Any], port: int = 8000) -> str:
    """The shell form of ``docker_argv``, one group of flags per line."""
    _, runtime = _runtime(docker, port)
    joiner = " \\\n  "
    lines = ["docker run " + joiner.join(docker.device_lines), runtime, f"-v {HF_CACHE_MOUNT}"]
    lines += [f"-v {quote_word(m)}" for m in _mounts(model, env)]
    lines += [f"-e {quote_word(f'{k}={text(v)}')}" for k, v in env.items()]
    prereq = f"# {model} must already exist on the host — bind-mounted read-only below.\n" if model.startswith(
        "/") else ""
    tail = f"{quote(docker.image or 'null')} {quote(model)}"
    body = joiner.join([*lines, tail])
    if arg_lines:
        body += joiner + joiner.join(arg_lines)
    return prereq + body

"""Where servekit deliberately differs from the public recipes site's output.

The reference JSON API and selections were produced by an older build of the site than the
seed recipe, and that build renders a few commands that cannot do what the recipe says. Each
entry names the difference, why servekit differs, which output fields it touches, the test
that proves it, and a predicate that says whether it applies to a selection. Golden tests
skip a field only when an entry here explains it, and then check the difference itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from servekit.hardware import profile_of
from servekit.records import record


COMMAND_FIELDS = ("command", "head_command", "worker_command", "worker_commands", "vllm_command",
                  "vllm_worker_command", "vllm_worker_commands")
DOCKER_FIELDS = ("docker_command", "docker_argv", "head_docker_command", "worker_docker_command",
                 "worker_docker_commands", "head_docker_argv", "worker_docker_argv", "worker_docker_argvs",
                 "vllm_docker_command", "vllm_docker_argv", "vllm_worker_docker_command",
                 "vllm_worker_docker_argv", "vllm_worker_docker_commands", "vllm_worker_docker_argvs")
ARGV_FIELDS = ("argv", "head_argv", "worker_argv", "worker_argvs", "vllm_argv", "vllm_worker_argv",
               "vllm_worker_argvs")
"""Output fields of a rendering object; PD roles' fields are listed too, as dotted paths."""


def _with_roles(*fields: str) -> tuple[str, ...]:
    """``fields`` plus ``prefill.<f>`` / ``decode.<f>`` for the ones a PD role object carries."""
    role_fields = {"command", "argv", "env", "docker_command", "docker_argv"}
    return fields + tuple(f"{role}.{f}" for role in ("prefill", "decode") for f in fields if f in role_fields)


@record
class Difference:
    id: str
    reason: str
    fields: tuple[str, ...]
    test: str
    applies: Callable[[Any, Any], bool]
    """``applies(docs, selection)``: does this difference touch that selection's output?"""


def _feature_env(docs, selection) -> bool:
    from servekit.synthesis.args import feature_blocks
    from servekit.synthesis.context import build_context

    return any(block for block, _ in feature_blocks(build_context(docs, selection), "env"))


def _exclusive(docs, selection) -> bool:
    return bool(selection.dropped_features)


def _ascend(docs, selection) -> bool:
    raw = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware) or {}
    return profile_of(raw, selection.hardware).platform == "ascend"


def _shell_round_trip(docs, selection) -> bool:
    from servekit.synthesis.args import serve_chunks
    from servekit.synthesis.context import build_context

    ctx = build_context(docs, selection)
    if ctx.hw.platform in ("xpu", "cpu"):
        return True
    return any(isinstance(t, str) and any(c.isspace() for c in t) and t.startswith("-")
               for tokens, _ in serve_chunks(ctx) for t in (tokens or []))


def _spaced_argument(docs, selection) -> bool:
    from servekit.catalog.spaced_args import split_spaced_flag
    from servekit.synthesis.args import serve_chunks
    from servekit.synthesis.context import build_context

    ctx = build_context(docs, selection)
    return any(split_spaced_flag(t) for tokens, _ in serve_chunks(ctx) for t in (tokens or []))


def _cpu(docs, selection) -> bool:
    raw = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware) or {}
    return profile_of(raw, selection.hardware).platform == "cpu"


def _no_image(docs, selection) -> bool:
    from servekit.synthesis.context import build_context
    from servekit.synthesis.docker import docker_for

    return docker_for(build_context(docs, selection)).image is None


def _several_nodes(docs, selection) -> bool:
    from servekit.synthesis.context import build_context
    from servekit.synthesis.docker import docker_for

    docker = docker_for(build_context(docs, selection))
    return docker.image is not None and docker.several_nodes


def _container_rules(docs, selection) -> bool:
    raw = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware) or {}
    return profile_of(raw, selection.hardware).platform in ("tpu", "xpu")


def _entrypoint(docs, selection) -> bool:
    from servekit.synthesis.context import build_context
    from servekit.synthesis.docker import docker_for
    from servekit.synthesis.images import container_command

    docker = docker_for(build_context(docs, selection))
    return docker.image is not None and container_command(docker.image, ["vllm", "serve", "M"], 2).words[:1] != ("M",)


def _ray_platform_nodes(docs, selection) -> bool:
    """A plan whose one engine spans TPU hosts: the Ray form with the platform's setting."""
    from servekit.synthesis.nodes import RAY_PLATFORMS, RAY_PROGRAM
    from servekit.synthesis.synthesize import synthesize

    raw = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware) or {}
    if selection.node_count <= 1 or profile_of(raw, selection.hardware).platform not in RAY_PLATFORMS:
        return False
    return any(p.program == RAY_PROGRAM for p in synthesize(docs, selection, lean=True).processes)


def _examples_elsewhere(docs, selection) -> bool:
    """A plan in an image that keeps vLLM's examples away from its working directory names one of
    them (read from the argument sources, as the other predicates read them: no synthesis)."""
    from servekit.synthesis.args import serve_chunks
    from servekit.synthesis.context import build_context
    from servekit.synthesis.docker import docker_for
    from servekit.synthesis.images import moved_paths

    ctx = build_context(docs, selection)
    image = docker_for(ctx).image
    if image is None or not moved_paths(image, ["examples/x"]):  # this image finds vLLM's examples as written
        return False
    return any(moved_paths(image, [t for t in tokens or () if isinstance(t, str)]) for tokens, _ in serve_chunks(ctx))


RAY_FORM_FIELDS = ("ray_head_argv", "ray_head_command", "ray_ready_command", "head_exec_command", "head_exec_argv")
"""The Ray form's own keys (``servekit.synthesis.render``)."""


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        id="feature-env",
        reason="An enabled feature's `env` is part of its launch line: long_context needs "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 or the server refuses a context past the model's native "
        "window. The reference build drops feature env; servekit emits it after every other layer.",
        fields=_with_roles("env", *DOCKER_FIELDS),
        test="tests/synthesis/test_golden_selections.py::test_golden_selections",
        applies=_feature_env,
    ),
    Difference(
        id="exclusive-features",
        reason="Features a recipe marks mutually exclusive (an explicit `exclusive_with` list, or "
        "a description saying 'Mutually exclusive with <feature>', e.g. text_only vs "
        "encoder_parallel) are never emitted together: the later choice wins and the plan says "
        "so in its notes. The reference emits both flags.",
        fields=_with_roles(*ARGV_FIELDS, *COMMAND_FIELDS, *DOCKER_FIELDS),
        test="tests/synthesis/test_golden_selections.py::test_golden_selections",
        applies=_exclusive,
    ),
    Difference(
        id="ascend-image",
        reason="A bare-string model.docker_image pins NVIDIA only; the reference build has no "
        "Huawei brand and renders the NVIDIA image (and --gpus all) for Ascend NPUs, which cannot "
        "start there. servekit renders the vllm-ascend image with the NPU device flags unless a "
        "variant x hardware override names an image.",
        fields=_with_roles("docker_image", *DOCKER_FIELDS),
        test="tests/synthesis/test_golden_selections.py::test_golden_selections",
        applies=_ascend,
    ),
    Difference(
        id="shell-round-trip",
        reason="Every shell command splits back into exactly its argv. A recipe argument that is "
        "one token containing whitespace (e.g. '--max-model-len auto' as one list item) is "
        "single-quoted, and docker's shared-memory flag is written '--shm-size 16g' (two words, "
        "as in docker_argv) instead of '--shm-size=16g'. The reference's command and argv "
        "disagree there. argv and docker_argv are unchanged.",
        fields=_with_roles(*COMMAND_FIELDS, "docker_command", "head_docker_command", "worker_docker_command",
                           "worker_docker_commands", "vllm_docker_command", "vllm_worker_docker_command",
                           "vllm_worker_docker_commands"),
        test="tests/synthesis/test_shell_roundtrip.py::test_spaced_token_is_quoted",
        applies=_shell_round_trip,
    ),
    Difference(
        id="spaced-argument-split",
        reason="A recipe argument that holds a flag and its value as one list item ('--max-model-len "
        "auto') is split into the flag and the value, as vLLM needs them; the reference keeps one "
        "argv item, which vLLM rejects as an unknown option. `catalog validate` warns where one is written.",
        fields=_with_roles(*ARGV_FIELDS, *COMMAND_FIELDS, *DOCKER_FIELDS),
        test="tests/synthesis/test_shell_roundtrip.py::test_spaced_argument_is_split",
        applies=_spaced_argument,
    ),
    Difference(
        id="cpu-container-options",
        reason="The CPU image's container runs with vLLM's own options for it (--security-opt "
        "seccomp=unconfined --cap-add SYS_NICE, vLLM's x86 CPU installation page) instead of "
        "--privileged --ipc=host: --privileged asks for every capability, which hosts that withhold "
        "some (CAP_SYS_RESOURCE) refuse, and the CPU backend needs none of them. The reference "
        "renders the NVIDIA runtime flags for every brand.",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/launch/test_container_options.py::test_the_cpu_form_asks_for_no_privileges",
        applies=_cpu,
    ),
    Difference(
        id="no-image-no-docker",
        reason="Where no image exists for the hardware (a nightly-only recipe on Intel Xeon, whose "
        "CPU image has no nightly tag; Qualcomm Cloud AI without a pinned image; a recipe whose "
        "docker_image is no image reference, such as 'docker pull IMAGE') the plan has no "
        "docker form. The reference renders 'docker run ... undefined MODEL' and a null in "
        "docker_argv; servekit omits docker_command / docker_argv (docker_image is absent in both).",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/synthesis/test_plan_rules.py::test_no_image_means_no_docker_form",
        applies=_no_image,
    ),
    Difference(
        id="host-network-for-several-nodes",
        reason="A plan whose servers run on several machines (multi-node ranks, prefill/decode pools, "
        "the instances behind a Mooncake store) runs its containers on the host network with no "
        "published ports: NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME=$IFACE_NAME name a host interface, "
        "which a container on Docker's bridge network does not have, and the ranks reach each "
        "other on ports no -p publishes. The reference keeps the bridge network and -p 8000:8000 "
        "on every node.",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/synthesis/test_docker_forms.py::test_several_nodes_use_the_host_network",
        applies=_several_nodes,
    ),
    Difference(
        id="one-flag-per-container-setting",
        reason="Each container setting is written once, as the platform's docs give it: the TPU "
        "form had --privileged twice and -p beside --network host (Docker drops the ports); the "
        "Intel XPU form gave shared memory twice (--shm-size beside --ipc=host, which ignores it) "
        "and keeps --ipc=host, as vLLM's XPU page runs it. (The CPU form: cpu-container-options.)",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/synthesis/test_docker_forms.py::test_no_container_flag_is_written_twice",
        applies=_container_rules,
    ),
    Difference(
        id="image-entrypoint",
        reason="The command is placed for the image's entrypoint (servekit.synthesis.images): "
        "vllm/vllm-tpu's entrypoint script runs the command it is given and vllm-ascend has none, "
        "so they get the whole `vllm serve MODEL ...`; an image servekit has no facts about gets "
        "--entrypoint vllm. The reference passes MODEL and flags to every image, which on those "
        "images tries to execute the model id.",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/synthesis/test_docker_forms.py::test_the_command_matches_the_image_entrypoint",
        applies=_entrypoint,
    ),
    Difference(
        id="examples-where-the-image-keeps-them",
        reason="A recipe names vLLM's example files relative to a vLLM checkout "
        "(--chat-template examples/tool_chat_template_*.jinja), which vLLM's CUDA image finds from "
        "its working directory (/vllm-workspace). vllm/vllm-openai-rocm runs from /app and keeps them "
        "at /app/vllm/examples (docker/Dockerfile.rocm), so the reference's ROCm docker command names "
        "a file that is not there and vLLM refuses to start. servekit's docker and Kubernetes forms "
        "name /app/vllm/examples/...; the plan's own command keeps the recipe's path.",
        fields=_with_roles(*DOCKER_FIELDS),
        test="tests/synthesis/test_docker_forms.py::test_a_path_into_vllms_examples_is_written_where_the_rocm_image_keeps_them",
        applies=_examples_elsewhere,
    ),
    Difference(
        id="tpu-hosts-through-ray",
        reason="vLLM's TPU plugin picks its executor from TPU_MULTIHOST_BACKEND, whatever the serve "
        "arguments say: unset, it runs on one host, so the reference's --nnodes/--node-rank/"
        "--master-addr commands start one TPU host alone per node and cannot make a TP group over "
        "hosts. servekit renders the Ray form there: TPU_MULTIHOST_BACKEND=ray on every node, Ray's "
        "head and vllm serve on the head, ray start on the others (in containers: a Ray container "
        "per node, vllm serve run inside the head's).",
        fields=("env", *ARGV_FIELDS, *COMMAND_FIELDS, *DOCKER_FIELDS, *RAY_FORM_FIELDS),
        test="tests/synthesis/test_golden_selections.py::test_golden_selections",
        applies=_ray_platform_nodes,
    ),
)


CONTAINER_FORM = ("host-network-for-several-nodes", "one-flag-per-container-setting", "image-entrypoint")
"""Differences in the ``docker run`` wrapping alone (the command inside it is the reference's)."""


def explaining(docs, selection) -> list[Difference]:
    """Every difference that applies to one selection."""
    return [d for d in DIFFERENCES if d.applies(docs, selection)]

"""The ``docker run`` forms follow the hardware's container rules, the plan's shape and the image."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from servekit.api.build import build_in_memory
from servekit.app.plan import plan
from servekit.app.plan_view import engine_docker_command, plan_payload
from servekit.app.request import PlanRequest
from servekit.catalog.documents import read_documents
from servekit.engines.common.command_line import split_docker_run
from servekit.engines.registry import engines, get_engine
from servekit.synthesis.images import IMAGES
from servekit.synthesis.shell import join_continuations

from testing.docker_cli import repeated, split_options

SEED = "Qwen/Qwen3.8-27B"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
BUNDLED = Path(__file__).resolve().parents[2] / "src" / "servekit" / "catalog_data"


def docker_forms(doc):
    """(docker_argv, docker_command) pairs anywhere in a rendering object."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key.endswith("docker_argv") and value:
                yield value, doc.get(key.replace("argv", "command"))
            elif key.endswith("docker_argvs") and isinstance(value, list):
                texts = doc.get(key.replace("argvs", "commands")) or [None] * len(value)
                yield from ((a, t) for a, t in zip(value, texts, strict=True) if a)
            else:
                yield from docker_forms(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from docker_forms(item)


@pytest.fixture(scope="module")
def bundled_forms():
    tree = build_in_memory(read_documents(BUNDLED))[0]
    forms = [form for rel in tree for form in docker_forms(tree.get(rel))]
    assert forms
    return forms


def _split(text: str) -> list[str]:
    return shlex.split(join_continuations(text))


def _options(argv) -> dict:
    return dict(split_options(argv)[0])


def test_several_nodes_use_the_host_network():
    payload = plan_payload(plan(PlanRequest(LLAMA, hardware="h200", strategy="multi_node_tp", nodes=2, checks=False)))
    forms = [payload["head_docker_argv"], *payload["worker_docker_argvs"]]
    assert len(forms) == 2
    for argv in forms:
        pairs = split_options(argv)[0]
        assert ("--network", "host") in pairs and not any(flag in ("-p", "--publish") for flag, _ in pairs)
        assert ("-e", "NCCL_SOCKET_IFNAME=$IFACE_NAME") in pairs  # a host interface, reachable on the host network
    single = plan_payload(plan(PlanRequest(LLAMA, hardware="h200", checks=False)))["docker_argv"]
    assert ("-p", "8000:8000") in split_options(single)[0] and "--network" not in _options(single)


def test_no_container_flag_is_written_twice(bundled_forms):
    for argv, text in bundled_forms:
        assert not repeated(argv), (repeated(argv), argv)
        options = _options(argv)
        assert not ("--network" in options and "-p" in options), argv
        assert text is None or _split(text) == [str(w) for w in argv]
    tpu = plan_payload(plan(PlanRequest(LLAMA, hardware="trillium", checks=False)))["docker_argv"]
    assert tpu.count("--privileged") == 1 and "-p" not in tpu and ("--network", "host") in split_options(tpu)[0]


def _after_image(argv) -> list[str]:
    run = split_docker_run([str(w) for w in argv])
    assert run is not None
    return [*(["--entrypoint", run.entrypoint] if run.entrypoint else []), run.image, *run.args]


def test_the_command_matches_the_image_entrypoint():
    cuda = plan_payload(plan(PlanRequest(LLAMA, hardware="h200", checks=False)))
    assert _after_image(cuda["docker_argv"])[1] == LLAMA  # vllm/vllm-openai starts `vllm serve` itself
    tpu = plan_payload(plan(PlanRequest(LLAMA, hardware="trillium", checks=False)))
    assert _after_image(tpu["docker_argv"])[1:4] == ["vllm", "serve", LLAMA]  # its entrypoint runs the command
    ascend = plan(PlanRequest(SEED, hardware="ascend_950pr", checks=False))
    words = _split(engine_docker_command(ascend, ascend.commands[0]))
    assert words[words.index("quay.io/ascend/vllm-ascend:v0.23.0") + 1:][:3] == ["vllm", "serve", SEED]
    sglang = plan(PlanRequest(LLAMA, hardware="h200", engine="sglang", checks=False))
    words = _split(engine_docker_command(sglang, sglang.commands[0]))
    image = sglang.commands[0].command.image
    assert words[words.index(image) + 1:][:3] == ["python", "-m", "sglang.launch_server"]
    assert ("-p", "30000:30000") in split_options(words)[0]  # SGLang's own port
    maxed = plan(PlanRequest(LLAMA, hardware="h200", engine="max", checks=False))
    words = _split(engine_docker_command(maxed, maxed.commands[0]))
    assert words[words.index(maxed.commands[0].command.image) + 1] == "--model-path"  # its entrypoint is max serve


def test_an_image_without_facts_gets_the_program_as_entrypoint():
    from servekit.app.overridden import plan_with_overrides
    from servekit.synthesis.overrides import Overrides

    result = plan_with_overrides(PlanRequest(LLAMA, hardware="h200", checks=False), Overrides(image="example.org/vllm:1"))
    argv = plan_payload(result)["docker_argv"]
    assert _after_image(argv)[:4] == ["--entrypoint", "vllm", "example.org/vllm:1", "serve"]


@pytest.mark.parametrize("hardware", ["h200", "trillium", "ascend_950pr"])
def test_the_vllm_engine_reads_its_own_docker_form_back(hardware):
    """``servekit lint -- docker run ...`` sees the same vLLM command whatever the image's entrypoint."""
    result = plan(PlanRequest(LLAMA, hardware=hardware, checks=False))
    if result.commands:
        text, argv = engine_docker_command(result, result.commands[0]), list(result.commands[0].command.argv)
    else:
        text, argv = plan_payload(result)["docker_command"], result.plan.processes[0].argv()
    command = get_engine("vllm").split_command(_split(text))
    assert command.form == "docker" and list(command.args) == [str(w) for w in argv[2:]]


def test_every_image_family_names_its_source():
    for facts in (*IMAGES, *(f for engine in engines() for f in engine.images)):
        assert facts.source.startswith("https://") and facts.repositories and facts.platforms, facts
        assert facts.passes_command == (not facts.entrypoint or facts.entrypoint[0].startswith("/")), facts


EXAMPLE_TEMPLATE = "examples/tool_chat_template_llama3.1_json.jinja"


@pytest.fixture
def template_catalog(tmp_path) -> Path:
    """The bundled catalog with the Llama recipe naming a chat template of vLLM's examples."""
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(BUNDLED, root)
    recipe = root / "models" / "meta-llama" / "Llama-3.1-8B-Instruct.yaml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(text.replace("  base_args: []\n", f'  base_args: ["--chat-template", "{EXAMPLE_TEMPLATE}"]\n', 1),
                      encoding="utf-8")
    return root


def _cli(capsys, *args: str) -> str:
    from servekit.cli.app import main

    code = main(["plan", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_a_path_into_vllms_examples_is_written_where_the_rocm_image_keeps_them(capsys, template_catalog):
    """vllm/vllm-openai-rocm runs from /app and keeps vLLM's examples at /app/vllm/examples: its
    docker and Kubernetes forms name the template there (the plan's own command keeps the recipe's
    relative path, which vLLM's CUDA image finds from its working directory), the text form says
    why, and the image check finds the file."""
    import yaml

    catalog = ("--catalog", str(template_catalog))
    doc = json.loads(_cli(capsys, LLAMA, "--hardware", "mi300x", *catalog, "--format", "json"))
    moved = "/app/vllm/examples/tool_chat_template_llama3.1_json.jinja"
    assert doc["argv"][doc["argv"].index("--chat-template") + 1] == EXAMPLE_TEMPLATE
    argv = doc["docker_argv"]
    assert argv[argv.index("--chat-template") + 1] == moved
    assert _split(doc["docker_command"]) == [str(w) for w in argv]
    text = _cli(capsys, LLAMA, "--hardware", "mi300x", *catalog, "--docker")
    assert f"{EXAMPLE_TEMPLATE} -> {moved}: vllm/vllm-openai-rocm" in text and "file-not-checked" not in text
    manifests = [d for d in yaml.safe_load_all(_cli(capsys, LLAMA, "--hardware", "mi300x", *catalog, "--format", "k8s"))
                 if d and d.get("kind") == "Deployment"]
    args = manifests[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--chat-template") + 1] == moved
    cuda = json.loads(_cli(capsys, LLAMA, "--hardware", "h100", *catalog, "--format", "json"))
    assert cuda["docker_argv"][cuda["docker_argv"].index("--chat-template") + 1] == EXAMPLE_TEMPLATE

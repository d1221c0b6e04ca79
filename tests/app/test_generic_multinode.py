"""Several nodes for any model: ``plan DIR --nodes N --tp T [--pp P]`` renders a head and a worker
per other node with vLLM's own rendezvous flags, checked by the pinned vLLM's flag catalog, and
``--format sh`` is one POSIX script (rank as ``$1``; ``HEAD_IP``, ``IFACE_NAME``, ``NODE_IP``
from the environment) that bash, dash and shellcheck accept and that runs the part it is given.

A recipe whose serve arguments choose ``--distributed-executor-backend ray`` gets the Ray form, and
so does one engine over several TPU hosts. vLLM's Ray executor refuses the CPU platform, so the
Ray form is checked here by its dry run, ``shlex``, ``bash -n`` and shellcheck; its rendezvous
(Ray's head, a node joining it) runs for real across two network namespaces in
tests/launch/test_engine_ray_nodes.py, and the multiprocessing form's engine in
tests/launch/test_engine_vllm_multinode.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from synthesis.test_plan_script import SHELLCHECK, shellcheck_findings
from testing.model_configs import DENSE_GQA, write_config_dir
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

from servekit.app.local_hardware import this_machine
from servekit.catalog.documents import bundled_catalog_dir
from servekit.cli.app import main
from servekit.synthesis.shell import split_command

BASH, DASH = shutil.which("bash"), shutil.which("dash")
MP_FLAGS = ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless")


def _plan(capsys, *args: str, form: str = "json") -> tuple[int, str, str]:
    code = main(["plan", *args, "--format", form])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _value(argv: list, flag: str) -> str:
    return str(argv[argv.index(flag) + 1])


def _part(script: str, rank: int) -> str:
    """The body of ``part_RANK() { ... }``."""
    return script.split(f"\npart_{rank}() {{\n", 1)[1].split("\n}\n", 1)[0]


def _command_of(body: str, program: str) -> list[str]:
    """The argv of the part's first command that ``program`` starts, as the shell splits it (the
    command's lines run to the first one without a continuation)."""
    lines = body[body.index(f"\n{program} ") + 1:].split("\n")
    end = next(i for i, line in enumerate(lines) if not line.endswith("\\"))
    return split_command("\n".join(lines[:end + 1]))


@pytest.fixture
def dense(tmp_path) -> Path:
    return write_config_dir(tmp_path / "dense", DENSE_GQA)


def test_a_model_without_a_recipe_spans_nodes_with_vllms_own_flags(capsys, dense):
    code, out, err = _plan(capsys, str(dense), "--hardware", "h100", "--nodes", "2", "--tp", "8", "--pp", "2")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["deploy_type"] == "multi_node" and doc["node_count"] == 2 and doc["strategy"] == "multi_node_tp_pp"
    head, (worker,) = doc["head_argv"], doc["worker_argvs"]
    for rank, argv in enumerate((head, worker)):
        assert argv[:3] == ["vllm", "serve", str(dense.resolve())]
        assert _value(argv, "--tensor-parallel-size") == "8" and _value(argv, "--pipeline-parallel-size") == "2"
        assert _value(argv, "--nnodes") == "2" and _value(argv, "--node-rank") == str(rank)
        assert _value(argv, "--master-addr") == "$HEAD_IP" and _value(argv, "--master-port") == "29501"
        assert ("--headless" in argv) == (rank > 0)
    assert doc["env"] == {"GLOO_SOCKET_IFNAME": "$IFACE_NAME", "NCCL_SOCKET_IFNAME": "$IFACE_NAME"}
    checks = doc["servekit"]["checks"]
    assert [(f["role"], f["rank"], f["version"], f["valid"]) for f in checks["flags"]] == [
        ("head", 0, "0.32.0", True), ("worker", 1, "0.32.0", True)]  # the pinned vLLM's own flag catalog
    assert not [f for f in checks["flags"] if any(x["severity"] == "error" for x in f["findings"])]
    assert checks["fit"][0]["ok"] and checks["fit"][0]["report"]["pp"] == 2
    sources = {a["arg"][0]: a["source"] for a in doc["servekit"]["provenance"]["worker[1]"]["args"]}
    assert "headless" in sources["--headless"] and sources["--pipeline-parallel-size"].startswith("--pp 2")


def test_without_tp_several_nodes_use_every_device(capsys, dense):
    code, out, _ = _plan(capsys, str(dense), "--hardware", "h100", "--nodes", "2", "--pp", "2")
    assert code == 0
    head = json.loads(out)["head_argv"]
    assert _value(head, "--tensor-parallel-size") == "8" and _value(head, "--pipeline-parallel-size") == "2"
    # 24 ranks of tensor parallelism cannot split 32 attention heads: the fit check says so, exit 1
    code, out, _ = _plan(capsys, str(dense), "--hardware", "h100", "--nodes", "3")
    fit = json.loads(out)["servekit"]["checks"]["fit"][0]
    assert code == 1 and not fit["ok"] and any(f["code"].startswith("tp-") for f in fit["findings"])


@pytest.mark.parametrize("args, message", [
    (("--nodes", "2", "--tp", "3"), "--tp 3 x --pp 1 = 3 ranks do not split evenly over 2 nodes"),
    (("--nodes", "2", "--tp", "32"), "puts 16 ranks on each of 2 nodes, which have 8 devices each"),
    (("--nodes", "2", "--pp", "0"), "--pp must be 1 or more, got 0"),
    (("--nodes", "0"), "--nodes must be 1 or more, got 0"),
    (("--nodes", "3", "--pp", "5"), "--pp 5 does not divide the 24 devices of 3 nodes"),
])
def test_layouts_that_cannot_be_laid_over_the_nodes_are_refused(capsys, dense, args, message):
    code, out, err = _plan(capsys, str(dense), "--hardware", "h100", *args, form="text")
    assert code == 1 and out == ""
    assert err.startswith("error: ") and message in err and "fix:" in err and "Traceback" not in err


def test_hardware_local_plans_for_this_cpu(capsys, tmp_path):
    if this_machine().gpus:
        pytest.skip("this machine has GPUs; the CPU env is for a machine without them")
    tiny = write_tiny_llama(tmp_path / "tiny", shape=TinyLlamaShape(heads=4, kv_heads=2))
    code, out, err = _plan(capsys, str(tiny), "--hardware", "local", "--nodes", "2", "--tp", "2")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hardware"] == "local" and doc["servekit"]["notes"][0].startswith("hardware: local (this machine")
    assert int(doc["env"]["VLLM_CPU_KVCACHE_SPACE"]) >= 1 and doc["env"]["VLLM_CPU_OMP_THREADS_BIND"] == "auto"
    fit = doc["servekit"]["checks"]["fit"][0]
    assert fit["ok"] and fit["report"]["available_kv_gib"] == int(doc["env"]["VLLM_CPU_KVCACHE_SPACE"])
    assert main(["plan", str(tiny), "--hardware", "nowhere"]) == 1
    assert "valid choices: local, " in capsys.readouterr().err


@pytest.fixture
def local_sh(capsys, tmp_path) -> tuple[str, dict]:
    """The --format sh script of a two-node plan of a tiny Llama, and its JSON form."""
    tiny = write_tiny_llama(tmp_path / "tiny", shape=TinyLlamaShape(heads=4, kv_heads=2))
    args = (str(tiny), "--hardware", "local", "--nodes", "2", "--tp", "2")
    code, script, err = _plan(capsys, *args, form="sh")
    assert code == 0, err
    return script, json.loads(_plan(capsys, *args)[1])


def test_the_sh_script_takes_the_rank_and_the_addresses_from_its_caller(local_sh):
    script, doc = local_sh
    assert script.startswith("#!/bin/sh\n") and 'part="${1:-}"' in script
    assert '  0) part_0 "$@" ;;' in script and '  1) part_1 "$@" ;;' in script
    head, worker = _part(script, 0), _part(script, 1)
    for body in (head, worker):
        assert ': "${HEAD_IP:?set HEAD_IP to the address of the head node' in body
        assert ': "${IFACE_NAME:?set IFACE_NAME to the network interface' in body
        assert 'export GLOO_SOCKET_IFNAME="$IFACE_NAME"' in body and 'export NCCL_SOCKET_IFNAME="$IFACE_NAME"' in body
        assert 'export VLLM_CPU_OMP_THREADS_BIND="${VLLM_CPU_OMP_THREADS_BIND:-auto}"' in body
    assert ': "${NODE_IP:?set NODE_IP to the address of this node' in worker and "NODE_IP" not in head
    assert 'export VLLM_HOST_IP="$HEAD_IP"' in head and 'export VLLM_HOST_IP="$NODE_IP"' in worker
    # each part's command is the plan's argv word for word, then the caller's own words
    assert _command_of(head, "vllm") == [*map(str, doc["head_argv"]), "$@"]
    assert _command_of(worker, "vllm") == [*map(str, doc["worker_argvs"][0]), "$@"]


@pytest.mark.skipif(DASH is None or BASH is None, reason="bash and dash are needed")
def test_the_sh_script_parses_and_runs_the_part_its_rank_names(local_sh, tmp_path):
    """Run with a stub ``vllm`` on PATH: the part of rank 1 checks its addresses, exports what
    vLLM reads and passes the words after the rank on."""
    script, _ = local_sh
    path = tmp_path / "plan.sh"
    path.write_text(script, encoding="utf-8")
    for shell in (BASH, DASH):
        assert subprocess.run([shell, "-n", str(path)], capture_output=True).returncode == 0
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "vllm").write_text('#!/bin/sh\necho "argv: $*"\necho "host: $VLLM_HOST_IP if: $GLOO_SOCKET_IFNAME '
                               'kv: $VLLM_CPU_KVCACHE_SPACE"\n')
    (stub / "vllm").chmod(0o755)
    env = {"PATH": f"{stub}:/usr/bin:/bin", "HEAD_IP": "10.0.0.1", "IFACE_NAME": "eth9"}
    run = subprocess.run([DASH, str(path), "1", "--enforce-eager"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert run.returncode != 0 and "set NODE_IP to the address of this node" in run.stderr
    run = subprocess.run([DASH, str(path), "1", "--enforce-eager"], capture_output=True, text=True,
                         env={**env, "NODE_IP": "10.0.0.2", "VLLM_CPU_KVCACHE_SPACE": "1"}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "--node-rank 1 --master-addr 10.0.0.1 --master-port 29501 --headless --enforce-eager" in run.stdout
    assert "host: 10.0.0.2 if: eth9 kv: 1" in run.stdout  # the machine's own KV space wins
    run = subprocess.run([DASH, str(path), "2"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 2 and "usage:" in run.stderr


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (scripts/install_system_tools.sh)")
def test_generic_multinode_scripts_pass_shellcheck(capsys, dense, tmp_path):
    scripts = {}
    for args in (("--nodes", "2", "--tp", "8", "--pp", "2"), ("--nodes", "4", "--pp", "4"), ("--tp", "2",)):
        for docker in ((), ("--docker",)):
            code, out, err = _plan(capsys, str(dense), "--hardware", "h100", *args, *docker, form="sh")
            assert code == 0, err
            scripts[" ".join((*args, *docker))] = out
    assert shellcheck_findings(scripts, tmp_path) == []


def test_shellcheck_findings_are_reported(tmp_path):
    if SHELLCHECK is None:
        pytest.skip("shellcheck is not installed (scripts/install_system_tools.sh)")
    found = shellcheck_findings({"unquoted": "#!/bin/sh\necho $HOME\n"}, tmp_path)
    assert len(found) == 1 and found[0].startswith("unquoted: ") and "SC2086" in found[0]


# -- the Ray form (dry run only: vLLM's Ray executor refuses the CPU platform) ------------------

def _llama_edited(tmp_path: Path, old: str, new: str) -> Path:
    """The bundled catalog with ``old`` replaced by ``new`` (once) in the Llama recipe."""
    root = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), root)
    recipe = root / "models" / "meta-llama" / "Llama-3.1-8B-Instruct.yaml"
    text = recipe.read_text(encoding="utf-8")
    assert old in text
    recipe.write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


@pytest.fixture
def ray_catalog(tmp_path) -> Path:
    """The bundled catalog with one recipe choosing Ray for its multi-node strategy."""
    return _llama_edited(tmp_path, "\nstrategy_overrides:\n", "\nstrategy_overrides:\n  multi_node_tp:\n    vllm_args:\n"
                         "      - \"--distributed-executor-backend\"\n      - \"ray\"\n")


RAY_JOIN = ["ray", "start", "--address", "$HEAD_IP:6379", "--node-ip-address", "$NODE_IP", "--block"]
"""A worker's part of the Ray form: it joins Ray's head."""
RAY_ARGS = ("meta-llama/Llama-3.1-8B-Instruct", "--strategy", "multi_node_tp", "--nodes", "2", "--hardware", "h100")


def test_a_recipe_that_chooses_ray_gets_the_ray_form(capsys, ray_catalog):
    code, out, err = _plan(capsys, *RAY_ARGS, "--catalog", str(ray_catalog))
    assert code == 0, err
    doc = json.loads(out)
    head = doc["head_argv"]
    assert head[:2] == ["vllm", "serve"] and _value(head, "--distributed-executor-backend") == "ray"
    assert _value(head, "--tensor-parallel-size") == "16" and not set(MP_FLAGS) & set(head)
    assert doc["worker_argvs"] == [RAY_JOIN]
    assert doc["ray_head_argv"] == ["ray", "start", "--head", "--port", "6379", "--node-ip-address", "$HEAD_IP"]
    assert [f["role"] for f in doc["servekit"]["checks"]["flags"]] == ["head"]  # ray start is no vLLM command
    assert all(f["valid"] for f in doc["servekit"]["checks"]["flags"])
    assert any("the Ray form" in note for note in doc["servekit"]["notes"])


def test_the_ray_form_script_parses_and_passes_shellcheck(capsys, ray_catalog, tmp_path):
    code, script, err = _plan(capsys, *RAY_ARGS, "--catalog", str(ray_catalog), form="sh")
    assert code == 0, err
    head, worker = _part(script, 0), _part(script, 1)
    assert re.search(r'export VLLM_HOST_IP="\$HEAD_IP"\n# Ray.*\nray start --head --port 6379 '
                     r'--node-ip-address "\$HEAD_IP"\nvllm serve ', head)
    assert _command_of(worker, "ray") == [*RAY_JOIN, "$@"]
    path = tmp_path / "ray.sh"
    path.write_text(script, encoding="utf-8")
    for shell in filter(None, (BASH, DASH)):
        assert subprocess.run([shell, "-n", str(path)], capture_output=True).returncode == 0
    if SHELLCHECK is not None:
        assert shellcheck_findings({"ray": script}, tmp_path) == []
    code, script, err = _plan(capsys, *RAY_ARGS, "--catalog", str(ray_catalog), "--docker", form="sh")
    assert code == 0, err
    _check_ray_containers(script, tmp_path, "vllm/vllm-openai:latest", entrypoint="ray")


def _check_ray_containers(script: str, tmp_path: Path, image: str, entrypoint: str | None) -> None:
    """The docker form of the Ray form: a Ray container per node (the head's detached), the wait for
    Ray's head, then ``vllm serve`` inside the head's container; every command splits back."""
    head, worker = _part(script, 0), _part(script, 1)
    run_head = _command_of(head, "docker")
    assert run_head[:5] == ["docker", "run", "-d", "--name", "servekit-ray"] and "--block" in run_head
    after = run_head[run_head.index(image) + 1:]
    ray = ["start", "--head", "--port", "6379", "--node-ip-address", "$HEAD_IP", "--block"]
    assert after == (ray if entrypoint else ["ray", *ray])
    assert (entrypoint is None) == ("--entrypoint" not in run_head)
    assert "until docker exec servekit-ray ray status >/dev/null 2>&1; do sleep 2; done\ndocker exec servekit-ray " \
        "vllm serve " in head
    serve = split_command(head[head.index("docker exec servekit-ray vllm serve"):])
    assert serve[:5] == ["docker", "exec", "servekit-ray", "vllm", "serve"] and serve[-1] == "$@"
    run_worker = _command_of(worker, "docker")
    assert run_worker[:4] == ["docker", "run", "--name", "servekit-ray"] and "-d" not in run_worker
    joins = [*(["ray"] if entrypoint is None else []), "start", "--address", "$HEAD_IP:6379", "--node-ip-address",
             "$NODE_IP", "--block", "$@"]
    assert run_worker[run_worker.index(image) + 1:] == joins
    assert ("--network", "host") in zip(run_worker, run_worker[1:])
    path = tmp_path / "ray-docker.sh"
    path.write_text(script, encoding="utf-8")
    for shell in filter(None, (BASH, DASH)):
        assert subprocess.run([shell, "-n", str(path)], capture_output=True).returncode == 0
    if SHELLCHECK is not None:
        assert shellcheck_findings({"ray-docker": script}, tmp_path) == []


TPU_ARGS = ("meta-llama/Llama-3.1-8B-Instruct", "--hardware", "trillium", "--nodes", "2")


def test_a_tpu_plan_spans_hosts_through_ray(capsys):
    """vLLM's TPU plugin picks its executor from TPU_MULTIHOST_BACKEND (tpu_platform.py), so a TPU
    plan over several hosts is the Ray form with that setting on every node, never --nnodes."""
    code, out, err = _plan(capsys, *TPU_ARGS)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["strategy"] == "multi_node_tp" and doc["env"]["TPU_MULTIHOST_BACKEND"] == "ray"
    head = doc["head_argv"]
    assert head[:2] == ["vllm", "serve"] and _value(head, "--tensor-parallel-size") == "16"
    assert not set(MP_FLAGS) & set(head) and "--distributed-executor-backend" not in head  # the plugin picks it
    assert doc["worker_argvs"] == [RAY_JOIN]
    assert doc["ray_head_argv"][:3] == ["ray", "start", "--head"]
    # the containers: the TPU image runs the command it is given, so no --entrypoint
    assert doc["head_docker_argv"][:5] == ["docker", "run", "-d", "--name", "servekit-ray"]
    assert doc["head_exec_argv"] == ["docker", "exec", "servekit-ray", *head]
    assert ("-e", "TPU_MULTIHOST_BACKEND=ray") in zip(doc["worker_docker_argv"], doc["worker_docker_argv"][1:])
    for text, argv in ((doc["head_docker_command"], doc["head_docker_argv"]),
                       (doc["head_exec_command"], doc["head_exec_argv"]),
                       (doc["worker_docker_command"], doc["worker_docker_argv"])):
        assert split_command(text) == [str(w) for w in argv]
    notes = doc["servekit"]["notes"]
    assert any("the Ray form" in n for n in notes) and any(n.startswith("TPU hosts:") for n in notes)
    # the why of a worker's flags names the platform's rule, not a serve argument it does not have
    worker = doc["servekit"]["provenance"]["worker[1]"]
    assert worker["args"] and all("TPU_MULTIHOST_BACKEND=ray" in a["source"] for a in worker["args"])
    assert "tpu_platform.py" in worker["env"]["TPU_MULTIHOST_BACKEND"]


def test_the_tpu_ray_scripts_export_the_setting_on_every_node(capsys, tmp_path):
    code, script, err = _plan(capsys, *TPU_ARGS, form="sh")
    assert code == 0, err
    for rank in (0, 1):
        assert "export TPU_MULTIHOST_BACKEND=ray" in _part(script, rank)
    assert _part(script, 0).index("export TPU_MULTIHOST_BACKEND=ray") < _part(script, 0).index("ray start --head")
    code, script, err = _plan(capsys, *TPU_ARGS, "--docker", form="sh")
    assert code == 0, err
    _check_ray_containers(script, tmp_path, "vllm/vllm-tpu:latest", entrypoint=None)
    assert "-e TPU_MULTIHOST_BACKEND=ray" in _part(script, 0) and "-e TPU_MULTIHOST_BACKEND=ray" in _part(script, 1)


@pytest.fixture
def dep_catalog(tmp_path) -> Path:
    """The bundled catalog with the Llama recipe offering data parallelism across nodes too."""
    return _llama_edited(tmp_path, "\n  - multi_node_tp\n", "\n  - multi_node_tp\n  - multi_node_dep\n")


def test_tpu_data_parallel_ranks_keep_their_own_rendezvous(capsys, dep_catalog):
    """Data-parallel ranks on TPU hosts each run their own engine on their own host: no Ray form."""
    code, out, err = _plan(capsys, *TPU_ARGS, "--strategy", "multi_node_dep", "--catalog", str(dep_catalog),
                           "--max-model-len", "8192")
    assert code == 0, err
    doc = json.loads(out)
    assert "TPU_MULTIHOST_BACKEND" not in doc["env"] and "ray_head_argv" not in doc
    assert all(argv[:2] == ["vllm", "serve"] for argv in doc["worker_argvs"])


def test_the_ray_form_has_no_kubernetes_form_and_says_why(capsys):
    code, _, err = _plan(capsys, *TPU_ARGS, form="k8s")
    assert code == 1 and "its nodes join through Ray" in err and "KubeRay" in err


def test_a_recipe_plan_takes_pp_as_an_override(capsys):
    code, out, _ = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--strategy", "multi_node_tp", "--nodes", "2",
                         "--pp", "2", "--tp", "8")
    doc = json.loads(out)
    assert code == 0 and _value(doc["head_argv"], "--pipeline-parallel-size") == "2"
    sources = {a["arg"][0]: a["source"] for a in doc["servekit"]["provenance"]["head"]["args"]}
    assert sources["--pipeline-parallel-size"] == "override: --pp"


# -- a plan in another engine's form over several nodes ---------------------------------------

ASCEND_NODE = '''  ascend_node_8x:
    brand: Huawei
    generation: npu
    display_name: "Ascend node"
    description: "8 Ascend NPUs, a node of a user's own catalog"
    gpu_count: 8
    vram_gb: 512
    multi_node: false
'''


def _with_ascend_node(root: Path) -> Path:
    taxonomy = root / "taxonomy.yaml"
    text = taxonomy.read_text(encoding="utf-8")
    assert "\n  ascend_950pr:\n" in text
    taxonomy.write_text(text.replace("\n  ascend_950pr:\n", "\n" + ASCEND_NODE + "  ascend_950pr:\n", 1),
                        encoding="utf-8")
    return root


@pytest.fixture
def ascend_catalog(tmp_path) -> Path:
    root = tmp_path / "ascend"
    shutil.copytree(bundled_catalog_dir(), root)
    return _with_ascend_node(root)


ASCEND_ARGS = ("meta-llama/Llama-3.1-8B-Instruct", "--strategy", "multi_node_tp", "--nodes", "2",
               "--hardware", "ascend_node_8x")


def test_a_vllm_ascend_plan_over_nodes_keeps_its_placeholders_expandable(capsys, ascend_catalog, tmp_path):
    """vLLM Ascend's form of a two-node plan: the head's address stays a shell variable the script
    fills in (never the literal text '$HEAD_IP'), and each node sets its own address for vLLM."""
    code, script, err = _plan(capsys, *ASCEND_ARGS, "--catalog", str(ascend_catalog), form="sh")
    assert code == 0, err
    head, worker = _part(script, 0), _part(script, 1)
    assert "'$HEAD_IP'" not in script
    assert _value(_command_of(head, "vllm"), "--master-addr") == "$HEAD_IP"
    assert 'export VLLM_HOST_IP="$HEAD_IP"' in head and 'export VLLM_HOST_IP="$NODE_IP"' in worker
    path = tmp_path / "ascend.sh"
    path.write_text(script, encoding="utf-8")
    for shell in filter(None, (BASH, DASH)):
        assert subprocess.run([shell, "-n", str(path)], capture_output=True).returncode == 0
    if SHELLCHECK is not None:
        assert shellcheck_findings({"ascend": script}, tmp_path) == []


def test_a_vllm_ascend_plan_that_chooses_ray_gets_the_ray_form_in_its_own_image(capsys, ray_catalog, tmp_path):
    _with_ascend_node(ray_catalog)
    code, script, err = _plan(capsys, *ASCEND_ARGS, "--catalog", str(ray_catalog), form="sh")
    assert code == 0, err
    head, worker = _part(script, 0), _part(script, 1)
    assert re.search(r'export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1\n(.*\n)*ray start --head --port 6379 '
                     r'--node-ip-address "\$HEAD_IP"\nvllm serve ', head)
    assert _command_of(worker, "ray") == [*RAY_JOIN, "$@"]
    code, script, err = _plan(capsys, *ASCEND_ARGS, "--catalog", str(ray_catalog), "--docker", form="sh")
    assert code == 0, err
    _check_ray_containers(script, tmp_path, "quay.io/ascend/vllm-ascend:v0.23.0", entrypoint=None)
    code, out, err = _plan(capsys, *ASCEND_ARGS, "--catalog", str(ray_catalog))
    doc = json.loads(out)
    assert doc["head_docker_argv"][:5] == ["docker", "run", "-d", "--name", "servekit-ray"]
    assert "quay.io/ascend/vllm-ascend:v0.23.0" in doc["head_docker_argv"]
    assert doc["head_exec_argv"][:5] == ["docker", "exec", "servekit-ray", "vllm", "serve"]


def test_an_engine_without_the_ray_form_says_so(capsys, ray_catalog):
    code, _, err = _plan(capsys, *RAY_ARGS, "--catalog", str(ray_catalog), "--engine", "sglang", form="text")
    assert code == 1 and "nodes join through Ray" in err and "leave out --engine sglang" in err
